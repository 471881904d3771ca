"""The Hugging Face side of ``bench/bert_latency.py --reference PYTHON``: runs in that other
interpreter (one with ``torch`` and ``transformers``; neither is a project dependency).

    PYTHON bench/hf_reference.py MODEL_DIR OUT.npz RUNS SENTENCE...

Loads ``BertModel`` and its fast tokenizer from MODEL_DIR (the embedded model's folder:
config.json, model.safetensors, vocab.txt), times the same request as the lab's (tokenize,
pad, every hidden state and attention matrix, to NumPy) on one CPU thread pool as PyTorch
sets it, and writes the times (ms) and the outputs of the last run to OUT.npz.
"""

import sys
import time

import numpy as np
import torch
from transformers import BertModel, BertTokenizerFast


def main() -> None:
    model_dir, out, runs, sentences = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
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
    times = np.empty(runs)
    for i in range(runs):
        t0 = time.perf_counter()
        hidden, attentions, ids = request()
        times[i] = (time.perf_counter() - t0) * 1000
    np.savez(out, times=times, hidden=hidden, attentions=attentions, input_ids=ids,
             versions=np.array([torch.__version__, __import__("transformers").__version__]))


if __name__ == "__main__":
    main()
