#!/usr/bin/env bash
# One-GPU check of rcrn, in under 5 minutes; every output goes into OUT_DIR.
#
#   scripts/gpu_check.sh OUT_DIR
#
# Steps (each with its own time cap, all within a 285 s deadline; a step that fails
# or runs out of time is reported and the others still run):
#   1. the CUDA tests: tests/test_propagation.py and tests/test_bench_training.py
#      parametrised on device "cuda" (pytest -k cuda)        -> pytest_cuda.txt/.xml
#   2. rcrn bench propagation --device cuda                   -> propagation.jsonl
#   3. rcrn bench training --device cuda (float32; bf16 autocast: paper dims, batch 64)
#                                                             -> training*.jsonl/.md
#   4. rcrn bench pipeline --device cuda (store read + collate vs the training step)
#                                                             -> pipeline.jsonl/.md
#   5. rcrn train on 100 generated synthetic scenes, train.device=cuda,
#      train.steps=200                                        -> train/, train.log
# and env.txt (torch, GPU, nvidia-smi) and summary.txt (status and seconds per step).
#
# Exit status: 0 when every step passed, 1 when one failed or ran out of time, 2 on
# bad usage, 77 (skipped) when torch sees no CUDA device.
# GPU_CHECK_DEVICE=cpu runs the same steps on the CPU with tiny grids (a dry run of
# this script itself on machines without a GPU); PYTHON selects the interpreter.
set -uo pipefail

if [[ $# -ne 1 || "$1" == -h || "$1" == --help ]]; then
    sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
    [[ $# -eq 1 ]] && exit 0 || exit 2
fi
OUT=$1
PY=${PYTHON:-python}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEVICE=${GPU_CHECK_DEVICE:-cuda}
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
cd "$ROOT" || exit 2
SUMMARY="$OUT/summary.txt"
: > "$SUMMARY"

if [[ "$DEVICE" == cuda ]]; then
    if ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' \
            2>"$OUT/cuda_probe.txt"; then
        msg="gpu_check: no CUDA: torch.cuda.is_available() is False on this machine ($("$PY" -c 'import torch; print("torch", torch.__version__, "built for CUDA", torch.version.cuda)' 2>/dev/null || echo 'torch not importable')); nothing was checked (exit 77 = skipped)"
        echo "$msg" | tee -a "$SUMMARY" >&2
        exit 77
    fi
fi

{
    date -u +"%Y-%m-%dT%H:%M:%SZ"
    "$PY" - <<'EOF'
import platform, torch
print("python", platform.python_version(), "torch", torch.__version__, "cuda", torch.version.cuda)
if torch.cuda.is_available():
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        print(f"cuda:{i} {p.name} {p.total_memory / 2**30:.1f} GiB")
EOF
    command -v nvidia-smi >/dev/null && nvidia-smi
} > "$OUT/env.txt" 2>&1

START=$SECONDS
DEADLINE=$((START + 285))
FAILED=0

# run NAME CAP_SECONDS LOG COMMAND...: stdout to LOG (JSON rows), stderr to LOG.err
run() {
    local name=$1 cap=$2 log=$3
    shift 3
    local left=$((DEADLINE - SECONDS))
    if ((left < 5)); then
        echo "$name: SKIPPED (out of the 285 s budget)" | tee -a "$SUMMARY"
        FAILED=1
        return
    fi
    ((cap > left)) && cap=$left
    local t0=$SECONDS rc=0
    echo "== $name (at most ${cap}s): $*" >&2
    timeout --signal=INT --kill-after=10 "$cap" "$@" > "$log" 2> "$log.err" || rc=$?
    local dt=$((SECONDS - t0))
    if ((rc == 0)); then
        echo "$name: ok (${dt}s) -> $log" | tee -a "$SUMMARY"
    elif ((rc == 124 || rc == 137)); then
        echo "$name: TIMED OUT after ${dt}s (cap ${cap}s; partial output in $log)" \
            | tee -a "$SUMMARY"
        FAILED=1
    else
        echo "$name: FAILED rc=$rc (${dt}s; see $log.err)" | tee -a "$SUMMARY"
        tail -n 5 "$log.err" | sed 's/^/    /' | tee -a "$SUMMARY"
        FAILED=1
    fi
}

if [[ "$DEVICE" == cpu ]]; then
    # dry run of the script: the same commands with tiny grids
    TESTS=(-k "cpu and (training_rows or single_node)")
    PROP=(--quick --no-reference)
    TRAIN=(--quick --batch 4 --proposals 8 --nodes 2 --min-time 0 --max-iters 2)
    TRAIN_AMP=(--quick --batch 4 --proposals 8 --nodes 2 --min-time 0 --max-iters 2)
    PIPE=(--quick)
    STEPS=5
else
    TESTS=(-k cuda)
    PROP=(--dims synthetic paper --batch 16 64 --proposals 36 100 --nodes 2 8 16
          --no-reference --min-time 0.3)
    TRAIN=(--dims synthetic paper --batch 16 64 --proposals 36 100 126 --nodes 2 4 8 16
           --min-time 0.2 --max-iters 20)
    TRAIN_AMP=(--dims paper --batch 64 --proposals 36 100 126 --nodes 2 4 8 16
               --min-time 0.2 --max-iters 20)
    PIPE=(--dims paper synthetic --batch 64 --proposals 100 --nodes 4 --workers 0 1 2
          --min-time 0.5)
    STEPS=200
fi

run "cuda tests" 90 "$OUT/pytest_cuda.txt" \
    "$PY" -m pytest tests/test_propagation.py tests/test_bench_training.py "${TESTS[@]}" \
    -q -p no:cacheprovider --junitxml "$OUT/pytest_cuda.xml"
run "propagation benchmark" 40 "$OUT/propagation.jsonl" \
    "$PY" -m rcrn bench propagation --device "$DEVICE" "${PROP[@]}"
run "training benchmark" 60 "$OUT/training.jsonl" \
    "$PY" -m rcrn bench training --device "$DEVICE" "${TRAIN[@]}" \
    --markdown "$OUT/training.md"
run "training benchmark bf16" 25 "$OUT/training_bf16.jsonl" \
    "$PY" -m rcrn bench training --device "$DEVICE" --amp bf16 "${TRAIN_AMP[@]}" \
    --markdown "$OUT/training_bf16.md"
run "pipeline benchmark" 25 "$OUT/pipeline.jsonl" \
    "$PY" -m rcrn bench pipeline --device "$DEVICE" "${PIPE[@]}" \
    --markdown "$OUT/pipeline.md"
run "short training" 45 "$OUT/train.log" \
    "$PY" -m rcrn train --out "$OUT/train" "data.root=$OUT/data" data.scenes=100 \
    "train.device=$DEVICE" "train.steps=$STEPS" train.log_every=50 eval.batch_size=256

echo "total: $((SECONDS - START))s on $DEVICE; outputs in $OUT" | tee -a "$SUMMARY"
exit $FAILED
