"""Context Lab's computing core: models, tokenization, analyses, figures.

Everything here is plain Python + TensorFlow + NumPy. Only ``lab.figures`` imports
Plotly, and nothing here imports Streamlit: pages call ``lab``, never the reverse.
"""

import os

# TensorFlow prints CUDA and oneDNN notices at import; keep the app's console readable.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

__version__ = "0.1.0"
