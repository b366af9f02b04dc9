# hummingd image: built with the project's own setup script in a CUDA devel
# image, run from a slim CUDA runtime image (which carries NVRTC).
#
#   docker build -t hummingd .
#   docker run --rm -v /run/hummingd:/run/hummingd \
#     -v /var/cache/hummingd:/var/cache/hummingd hummingd
ARG CUDA_VERSION=13.0.0
ARG BASE_OS=ubuntu24.04

FROM nvidia/cuda:${CUDA_VERSION}-devel-${BASE_OS} AS build
WORKDIR /src
COPY . .
RUN apt-get update -qq \
 && HUMMINGD_BUILD_TESTS=OFF BUILD_DIR=/src/build scripts/setup.sh \
 && mkdir -p /opt/hummingd/bin /opt/hummingd/lib \
 && cp build/server/hummingd build/ctl/hummingctl /opt/hummingd/bin/ \
 # Carry the distribution libraries the binaries link (gRPC, RocksDB, …),
 # except libc and the CUDA libraries the runtime image already has.
 && for binary in /opt/hummingd/bin/*; do \
      ldd "$binary" | awk '/=> \//{print $3}' ; \
    done | sort -u | grep -vE '/(libc|libm|libpthread|libdl|librt|ld-linux|libnvrtc|libcuda)[.-]' \
    | xargs -r cp -L -t /opt/hummingd/lib/

FROM nvidia/cuda:${CUDA_VERSION}-runtime-${BASE_OS}
COPY --from=build /opt/hummingd /opt/hummingd
COPY deploy /opt/hummingd/deploy
ENV PATH=/opt/hummingd/bin:$PATH \
    LD_LIBRARY_PATH=/opt/hummingd/lib:$LD_LIBRARY_PATH \
    HUMMINGD_SOCKET=/run/hummingd/hummingd.sock
VOLUME ["/var/cache/hummingd", "/run/hummingd"]
HEALTHCHECK --interval=30s --timeout=5s CMD ["hummingctl", "health"]
ENTRYPOINT ["hummingd"]
# 0666: the container runs as root and its clients rarely do; whoever may
# mount the socket's volume may use it.
CMD ["--socket=/run/hummingd/hummingd.sock", "--socket-mode=0666", \
     "--cache-dir=/var/cache/hummingd"]
