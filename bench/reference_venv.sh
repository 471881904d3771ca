#!/bin/sh
# Build the interpreter that `bench/bert_latency.py --reference PYTHON` times Hugging Face in:
#
#     sh bench/reference_venv.sh [DIR]       # default /tmp/hfref; then --reference DIR/bin/python
#
# torch and transformers are not project dependencies. The pin is torch's CPU build
# (`+cpu`, no CUDA libraries, about 190 MB): a plain `torch==2.13.0` from PyPI is the CUDA
# build and pulls several GB of nvidia-* wheels. pip finds the CPU build where it is
# configured to look (here: /opt/wheels, find-links); elsewhere add
# `--index-url https://download.pytorch.org/whl/cpu` or PIP_EXTRA_INDEX_URL to it.
# The script fails rather than install the CUDA build.
set -eu
DIR=${1:-/tmp/hfref}
TORCH=2.13.0+cpu
python3 -m venv "$DIR"
"$DIR/bin/pip" install --quiet "torch==$TORCH" transformers
"$DIR/bin/python" - <<PY
import torch, transformers
assert torch.__version__ == "$TORCH", f"got torch {torch.__version__}, not the CPU build $TORCH"
assert torch.version.cuda is None, "a CUDA build of torch"
print(f"$DIR/bin/python: torch {torch.__version__}, transformers {transformers.__version__}")
PY
