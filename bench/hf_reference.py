"""The Hugging Face side of ``bench/bert_latency.py --reference PYTHON``: runs in that other
interpreter (one with ``torch`` and ``transformers``; neither is a project dependency;
``bench/reference_venv.sh`` builds one).

    PYTHON bench/hf_reference.py MODEL_DIR OUT.npz SENTENCE...

Loads ``BertModel`` and its fast tokenizer from MODEL_DIR (the embedded model's folder:
config.json, model.safetensors, vocab.txt) and times the same request as the lab's
(tokenize, pad, every hidden state and attention matrix, to NumPy) on one CPU thread pool
as PyTorch sets it. It warms up, prints ``ready``, then for each line ``N`` on stdin runs
one request untimed (the caches and threads the caller's requests left cold) and times N,
printing their times (ms) on one line, so that the caller can interleave them with its own
and both sides see the same load. At the end of stdin it writes the
outputs of the last request and the versions and thread settings to OUT.npz.
"""

import sys
import time

import numpy as np
import torch
from transformers import BertModel, BertTokenizerFast


def main() -> None:
    model_dir, out, sentences = sys.argv[1], sys.argv[2], sys.argv[3:]
    tokenizer = BertTokenizerFast(f"{model_dir}/vocab.txt", do_lower_case=True)
    model = BertModel.from_pretrained(model_dir, attn_implementation="eager").eval()

    def request():
        batch = tokenizer(sentences, padding=True, return_tensors="pt")
        with torch.inference_mode():
            o = model(**batch, output_hidden_states=True, output_attentions=True)
        return (np.stack([h.numpy() for h in o.hidden_states]), np.stack([a.numpy() for a in o.attentions]),
                batch["input_ids"].numpy())

    for _ in range(5):
        request()
    print("ready", flush=True)
    for line in sys.stdin:
        request()
        times = []
        for _ in range(int(line)):
            t0 = time.perf_counter()
            hidden, attentions, ids = request()
            times.append((time.perf_counter() - t0) * 1000)
        print(" ".join(f"{t:.4f}" for t in times), flush=True)
    threads = (f"intra-op {torch.get_num_threads()}, inter-op {torch.get_num_interop_threads()}, "
               f"{torch.backends.cpu.get_cpu_capability()}")
    np.savez(out, hidden=hidden, attentions=attentions, input_ids=ids,
             versions=np.array([torch.__version__, __import__("transformers").__version__, threads]))


if __name__ == "__main__":
    main()
