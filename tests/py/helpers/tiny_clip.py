"""A randomly initialised, tiny CLIP written into a Hugging Face cache under a model name and
revision, so that mteb's own loader for that model (AutoModel + AutoProcessor, torchvision's
image pipeline) runs offline. Run in .venv-mteb:

    python tests/py/helpers/tiny_clip.py HF_HOME NAME REVISION
"""
import sys
from pathlib import Path

import torch
from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor, CLIPTokenizer


def byte_alphabet() -> list[str]:
    """Byte-level BPE's 256 symbols: printable bytes stand for themselves, the rest are moved
    past U+00FF in order."""
    printable = {*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)}
    out, moved = [], 0
    for b in range(256):
        if b in printable:
            out.append(chr(b))
        else:
            out.append(chr(256 + moved))
            moved += 1
    return out


def write_tiny_clip(hf_home: Path, name: str, revision: str) -> Path:
    snap = hf_home / "hub" / ("models--" + name.replace("/", "--")) / "snapshots" / revision
    snap.mkdir(parents=True, exist_ok=True)
    chars = byte_alphabet()
    vocab = {c: i for i, c in enumerate(chars)}  # no merges: every word is its bytes, the last with </w>
    for c in chars:
        vocab[c + "</w>"] = len(vocab)
    for special in ("<|startoftext|>", "<|endoftext|>"):
        vocab[special] = len(vocab)
    torch.manual_seed(0)
    cfg = CLIPConfig(
        text_config=dict(vocab_size=len(vocab), hidden_size=32, intermediate_size=37, num_hidden_layers=1,
                         num_attention_heads=2, max_position_embeddings=77,
                         bos_token_id=vocab["<|startoftext|>"], eos_token_id=vocab["<|endoftext|>"]),
        vision_config=dict(hidden_size=32, intermediate_size=37, num_hidden_layers=1, num_attention_heads=2,
                           image_size=32, patch_size=16),
        projection_dim=16)
    CLIPModel(cfg).save_pretrained(snap)
    images = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    CLIPProcessor(image_processor=images, tokenizer=CLIPTokenizer(vocab=vocab, merges=[])).save_pretrained(snap)
    refs = snap.parent.parent / "refs"
    refs.mkdir(exist_ok=True)
    (refs / "main").write_text(revision)
    return snap


if __name__ == "__main__":
    write_tiny_clip(Path(sys.argv[1]), sys.argv[2], sys.argv[3])
