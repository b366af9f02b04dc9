#!/usr/bin/env python3
"""scripts/tile_sweep.sh against a stand-in bench (no GPU): every sweep line
runs the bench once with its spec, shape, token counts and override, comments
and blank lines are skipped, a failing line is reported by its file line
while the others still run, sweep.json merges every line's rows, and the last
line of sweep.txt sums the bench's host phases over the lines that ran."""

import json
import os
import stat
import subprocess
import tempfile
import textwrap
import unittest

SCRIPTS = os.environ.get(
    "HUMMINGD_SCRIPTS",
    os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts"))

# The stand-in bench: records its arguments, writes one row per token count
# to --json, prints a phases line as gemm_bench.cc does, and fails for a
# spec that names weight=fail.
FAKE_BENCH = textwrap.dedent("""\
    #!/usr/bin/env bash
    echo "$@" >> "$CALLS"
    json=""; spec=""; shape=""; ms=""; override=""
    while [[ $# -gt 0 ]]; do
      case "$1" in
        --json) json=$2; shift ;;
        --specs) spec=$2; shift ;;
        --shapes) shape=$2; shift ;;
        --ms) ms=$2; shift ;;
        --override) override=$2; shift ;;
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
      rows+="\\"us\\":$((10 + m)).5,\\"fraction\\":0.8,"
      rows+="\\"kernel\\":\\"tile=8x32x1024\\",\\"splits\\":2,"
      rows+="\\"numerics_ok\\":true}"
    done
    echo "[$rows]" > "$json"
    echo "phases ${shape}: resolve 0.50 s, inputs 1.25 s, layers 0.25 s," \\
         "measure 2.00 s" >&2
    """)

SWEEP = textwrap.dedent("""\
    # a comment line
    weight=uint4,group=128,scale=fp16,act=fp16,out=fp16|8192x8192|1,8|

    weight=fail,group=128|4096x4096|1|
    weight=uint8,group=128,scale=fp16,act=fp16,out=fp16|4096x14336|16|16:tile=16x128x128,warps=1x8,stages=4,mma=wgmma:4
    """)


class TileSweepTest(unittest.TestCase):

    def run_sweep(self):
        folder = tempfile.mkdtemp()
        bench = os.path.join(folder, "carry", "bin", "hummingd_gemm_bench")
        os.makedirs(os.path.dirname(bench))
        os.makedirs(os.path.join(folder, "carry", "lib"))
        with open(bench, "w") as handle:
            handle.write(FAKE_BENCH)
        os.chmod(bench, os.stat(bench).st_mode | stat.S_IEXEC)
        sweep = os.path.join(folder, "sweep.txt")
        with open(sweep, "w") as handle:
            handle.write(SWEEP)
        out = os.path.join(folder, "out")
        calls = os.path.join(folder, "calls.txt")
        env = dict(os.environ, OUT=out, CALLS=calls)
        result = subprocess.run(
            ["bash", os.path.join(SCRIPTS, "tile_sweep.sh"),
             os.path.join(folder, "carry"), sweep],
            env=env, capture_output=True, text=True, check=False)
        with open(calls) as handle:
            call_lines = handle.read().splitlines()
        with open(os.path.join(out, "sweep.txt")) as handle:
            text = handle.read()
        with open(os.path.join(out, "sweep.json")) as handle:
            rows = json.load(handle)
        return result, call_lines, text, rows

    def test_runs_every_line_and_reports_the_failed_one(self):
        result, calls, text, rows = self.run_sweep()
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertEqual(len(calls), 3)
        self.assertIn("--ms 1,8", calls[0])
        self.assertNotIn("--override", calls[0])
        self.assertIn(
            "--override 16:tile=16x128x128,warps=1x8,stages=4,mma=wgmma:4",
            calls[2])
        # File line 4 is the failing one (comment and blank lines count).
        self.assertIn("line 4 failed", text)
        self.assertEqual([(r["line"], r["m"]) for r in rows],
                         [(2, 1), (2, 8), (5, 16)])
        self.assertIn("M=8 ", text)

    def test_last_line_sums_the_phases_of_the_lines_that_ran(self):
        _, _, text, _ = self.run_sweep()
        last = text.strip().splitlines()[-1]
        self.assertTrue(last.startswith("phases over 3 lines"), last)
        # Two layers printed phases (the failed line printed none).
        self.assertIn("2 layers: resolve 1.0 s, inputs 2.5 s, layers 0.5 s,"
                      " measure 4.0 s", last)


if __name__ == "__main__":
    unittest.main()
