"""A stand-in for hummingd_gemm_bench in a carry folder, for tests of the
device-call scripts (scripts/tile_sweep.sh, scripts/ab_sweep.sh) without a
GPU. The stand-in records its arguments (one line per call, to $CALLS when
set), writes one row per token count to --json with us = us_base + M + 0.5,
prints a phases line with gemm_bench.cc's keys (in another order, so that a
reader must go by the names), and fails for a spec that names weight=fail.
Its rows name a GPU, and ceilings of 3.02 TB/s and 771.5 TFLOP/s, only when
written with one (as benches before the "gpu" key did not)."""

import os
import stat
import textwrap

SCRIPTS = os.environ.get(
    "HUMMINGD_SCRIPTS",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                 "scripts"))

_BENCH = textwrap.dedent("""\
    #!/usr/bin/env bash
    [[ -n "${CALLS:-}" ]] && echo "$@" >> "$CALLS"
    json=""; spec=""; shape=""; ms=""
    while [[ $# -gt 0 ]]; do
      case "$1" in
        --json) json=$2; shift ;;
        --specs) spec=$2; shift ;;
        --shapes) shape=$2; shift ;;
        --ms) ms=$2; shift ;;
      esac
      shift
    done
    if [[ "$spec" == *weight=fail* ]]; then
      echo "gemm_bench: a failure the sweep must report" >&2
      exit 1
    fi
    n=${shape%x*}; k=${shape#*x}
    rows=""
    for m in ${ms//,/ }; do
      [[ -n "$rows" ]] && rows+=","
      rows+="{\\"spec\\":\\"$spec\\",\\"n\\":$n,\\"k\\":$k,\\"m\\":$m,"
      rows+="\\"us\\":$((US_BASE + m)).5,\\"fraction\\":0.8,"
      [[ -n "${GPU:-}" ]] &&
        rows+="\\"gpu\\":\\"$GPU\\",\\"copy_tbps\\":3.02,\\"tensor_tflops\\":771.5,"
      rows+="\\"kernel\\":\\"tile=8x32x1024\\",\\"splits\\":2,"
      rows+="\\"numerics_ok\\":true}"
    done
    echo "[$rows]" > "$json"
    echo "phases ${shape}: measure 2.00 s, layers 0.25 s, resolve 0.50 s," \\
         "inputs 1.25 s" >&2
    """)


def write_bench(path, us_base, gpu=""):
    """The stand-in bench at path, timing every case at us_base + M + 0.5,
    its rows naming `gpu` when given."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(_BENCH.replace(
            "#!/usr/bin/env bash\n",
            f"#!/usr/bin/env bash\nUS_BASE={us_base}\nGPU='{gpu}'\n", 1))
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)


def write_carry(folder, us_base, gpu=""):
    """A carry folder (bin/ and lib/) holding the stand-in bench."""
    os.makedirs(os.path.join(folder, "lib"), exist_ok=True)
    write_bench(os.path.join(folder, "bin", "hummingd_gemm_bench"), us_base, gpu)
