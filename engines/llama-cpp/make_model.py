#!/usr/bin/env python3
"""Generate a tiny random-weight llama-architecture model ("tiny-llama") for benchmarking llama-server.

Why: no model hub is reachable here, yet infermeter needs a *real* inference engine to measure. The
weights are random, so the text it writes is noise, but the compute (prefill and decode through 8
transformer blocks), the KV cache, the tokenizer and the token stream are all real.

What it writes into --out (a folder):
  tiny-llama.gguf           GGUF v3, architecture "llama", F16 weights, byte-level BPE tokenizer
                            (GPT-2 pre-tokenizer), ChatML chat template in tokenizer.chat_template
  hf-tokenizer/             the same tokenizer for tools that want a Hugging Face folder:
                            tokenizer.json, tokenizer_config.json (with chat_template),
                            special_tokens_map.json, config.json (LlamaConfig), generation_config.json
  model_info.json           shapes, parameter count and the sha256 of every input, for provenance

Shape: vocab 8,192, width 512, 8 layers, 8 query heads / 4 KV heads (head dim 64), FFN 1,376,
n_ctx_train 4,096: 31.6M parameters (~61 MiB as F16).

Deterministic: the tokenizer is trained on a fixed, sorted corpus and the weights come from a
fixed-seed PCG64 generator, so the same inputs give byte-identical files. The corpus is the text of
/usr/share/common-licenses/* (Debian base-files) plus the non-test Python sources of the pinned
numpy wheel (the licenses alone are too small for 8,192 BPE tokens); model_info.json records its
sha256. setup.sh caches the output keyed by the hash of this script.

Usage: python make_model.py --out DIR   (needs the PyPI packages gguf, tokenizers, numpy)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from importlib import metadata
from pathlib import Path

import gguf
import numpy as np
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

SEED = 20240531
VOCAB_SIZE = 8192
N_EMBD = 512
N_LAYER = 8
N_HEAD = 8
N_HEAD_KV = 4
N_FF = 1376
N_CTX_TRAIN = 4096
RMS_EPS = 1e-5
ROPE_THETA = 10000.0
INIT_STD = 0.02
MODEL_NAME = "tiny-llama"

ENDOFTEXT, IM_START, IM_END = "<|endoftext|>", "<|im_start|>", "<|im_end|>"
SPECIAL_TOKENS = [ENDOFTEXT, IM_START, IM_END]

# ChatML, as Qwen2 and many others ship it; llama-server recognises it from the GGUF metadata.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def corpus_files() -> list[Path]:
    """The tokenizer's training text, in a fixed order (symlinked duplicates removed)."""
    licenses = Path("/usr/share/common-licenses")
    files = sorted({p.resolve() for p in licenses.glob("*") if p.is_file()}) if licenses.is_dir() else []
    numpy_dir = Path(np.__file__).parent
    files += sorted(
        p for p in numpy_dir.rglob("*.py") if "tests" not in p.relative_to(numpy_dir).parts
    )
    if not files:
        sys.exit("make_model.py: no training text found (neither common-licenses nor numpy sources)")
    return files


def sha256_files(files: list[Path]) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(f.read_bytes())
    return h.hexdigest()


def train_tokenizer(files: list[Path]) -> Tokenizer:
    """Byte-level BPE exactly like GPT-2's: every byte is a token, so any input round-trips."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        min_frequency=1,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train([str(f) for f in files], trainer)
    if tok.get_vocab_size() != VOCAB_SIZE:
        sys.exit(
            f"make_model.py: tokenizer training gave {tok.get_vocab_size()} tokens, expected "
            f"{VOCAB_SIZE}; the corpus is too small"
        )
    return tok


def vocab_and_merges(tok: Tokenizer) -> tuple[list[str], list[str]]:
    model = json.loads(tok.to_str())["model"]
    by_id = sorted(model["vocab"].items(), key=lambda kv: kv[1])
    assert [i for _, i in by_id] == list(range(VOCAB_SIZE)), "vocab ids must be dense"
    # tokenizers writes merges as ["a", "b"] pairs in newer versions, "a b" strings in older ones.
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    return [t for t, _ in by_id], merges


def random_weights() -> dict[str, np.ndarray]:
    """Llama tensors in GGUF naming; numpy shape (out, in) as in a Hugging Face checkpoint."""
    rng = np.random.Generator(np.random.PCG64(SEED))
    head_dim = N_EMBD // N_HEAD

    def normal(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape, dtype=np.float32) * INIT_STD).astype(np.float16)

    def ones(n: int) -> np.ndarray:
        return np.ones(n, dtype=np.float32)  # norms stay F32, as llama.cpp's converter writes them

    t: dict[str, np.ndarray] = {"token_embd.weight": normal(VOCAB_SIZE, N_EMBD)}
    for i in range(N_LAYER):
        b = f"blk.{i}"
        t[f"{b}.attn_norm.weight"] = ones(N_EMBD)
        t[f"{b}.attn_q.weight"] = normal(N_HEAD * head_dim, N_EMBD)
        t[f"{b}.attn_k.weight"] = normal(N_HEAD_KV * head_dim, N_EMBD)
        t[f"{b}.attn_v.weight"] = normal(N_HEAD_KV * head_dim, N_EMBD)
        t[f"{b}.attn_output.weight"] = normal(N_EMBD, N_HEAD * head_dim)
        t[f"{b}.ffn_norm.weight"] = ones(N_EMBD)
        t[f"{b}.ffn_gate.weight"] = normal(N_FF, N_EMBD)
        t[f"{b}.ffn_up.weight"] = normal(N_FF, N_EMBD)
        t[f"{b}.ffn_down.weight"] = normal(N_EMBD, N_FF)
    t["output_norm.weight"] = ones(N_EMBD)
    t["output.weight"] = normal(VOCAB_SIZE, N_EMBD)
    return t


def write_gguf(path: Path, tokens: list[str], merges: list[str], ids: dict[str, int],
               tensors: dict[str, np.ndarray]) -> None:
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name(MODEL_NAME)
    w.add_description("random weights, generated by infermeter engines/llama-cpp/make_model.py")
    w.add_context_length(N_CTX_TRAIN)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(N_LAYER)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD_KV)
    w.add_rope_dimension_count(N_EMBD // N_HEAD)
    w.add_rope_freq_base(ROPE_THETA)
    w.add_layer_norm_rms_eps(RMS_EPS)
    w.add_vocab_size(VOCAB_SIZE)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)

    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")  # the GPT-2 split regex, the one HF's ByteLevel pre-tokenizer uses
    w.add_token_list(tokens)
    special = set(SPECIAL_TOKENS)
    w.add_token_types([gguf.TokenType.CONTROL if t in special else gguf.TokenType.NORMAL for t in tokens])
    w.add_token_merges(merges)
    w.add_bos_token_id(ids[ENDOFTEXT])
    w.add_eos_token_id(ids[IM_END])
    w.add_eot_token_id(ids[IM_END])
    w.add_pad_token_id(ids[ENDOFTEXT])
    w.add_add_bos_token(False)
    w.add_chat_template(CHAT_TEMPLATE)

    for name, data in tensors.items():
        w.add_tensor(name, data)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_hf_folder(folder: Path, tok: Tokenizer, ids: dict[str, int]) -> None:
    folder.mkdir(parents=True)
    tok.save(str(folder / "tokenizer.json"))

    def dump(name: str, obj: dict) -> None:
        (folder / name).write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n")

    dump("tokenizer_config.json", {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": ENDOFTEXT,
        "eos_token": IM_END,
        "pad_token": ENDOFTEXT,
        "unk_token": None,
        "add_bos_token": False,
        "add_eos_token": False,
        "clean_up_tokenization_spaces": False,
        "model_max_length": N_CTX_TRAIN,
        "chat_template": CHAT_TEMPLATE,
        "added_tokens_decoder": {
            str(ids[t]): {"content": t, "special": True, "lstrip": False, "rstrip": False,
                          "normalized": False, "single_word": False}
            for t in SPECIAL_TOKENS
        },
    })
    dump("special_tokens_map.json", {"bos_token": ENDOFTEXT, "eos_token": IM_END, "pad_token": ENDOFTEXT})
    dump("config.json", {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": VOCAB_SIZE,
        "hidden_size": N_EMBD,
        "intermediate_size": N_FF,
        "num_hidden_layers": N_LAYER,
        "num_attention_heads": N_HEAD,
        "num_key_value_heads": N_HEAD_KV,
        "head_dim": N_EMBD // N_HEAD,
        "max_position_embeddings": N_CTX_TRAIN,
        "rms_norm_eps": RMS_EPS,
        "rope_theta": ROPE_THETA,
        "hidden_act": "silu",
        "tie_word_embeddings": False,
        "torch_dtype": "float16",
        "bos_token_id": ids[ENDOFTEXT],
        "eos_token_id": ids[IM_END],
        "pad_token_id": ids[ENDOFTEXT],
    })
    dump("generation_config.json", {"bos_token_id": ids[ENDOFTEXT], "eos_token_id": ids[IM_END]})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path, help="folder to create (must not exist)")
    out: Path = ap.parse_args().out
    if out.exists():
        sys.exit(f"make_model.py: {out} already exists; remove it or pick another --out")
    out.mkdir(parents=True)

    files = corpus_files()
    tok = train_tokenizer(files)
    tokens, merges = vocab_and_merges(tok)
    ids = {t: tokens.index(t) for t in SPECIAL_TOKENS}
    tensors = random_weights()
    n_params = int(sum(a.size for a in tensors.values()))

    gguf_path = out / "tiny-llama.gguf"
    write_gguf(gguf_path, tokens, merges, ids, tensors)
    write_hf_folder(out / "hf-tokenizer", tok, ids)
    info = {
        "name": MODEL_NAME,
        "architecture": "llama",
        "parameters": n_params,
        "vocab_size": VOCAB_SIZE,
        "n_embd": N_EMBD,
        "n_layer": N_LAYER,
        "n_head": N_HEAD,
        "n_head_kv": N_HEAD_KV,
        "n_ff": N_FF,
        "n_ctx_train": N_CTX_TRAIN,
        "weights": "random normal(0, 0.02), F16; norms 1.0, F32",
        "seed": SEED,
        "special_token_ids": ids,
        "corpus_files": len(files),
        "corpus_sha256": sha256_files(files),
        "gguf_sha256": hashlib.sha256(gguf_path.read_bytes()).hexdigest(),
        "versions": {pkg: metadata.version(pkg) for pkg in ("gguf", "tokenizers", "numpy")},
    }
    (out / "model_info.json").write_text(json.dumps(info, indent=2) + "\n")
    print(f"tiny-llama: {n_params / 1e6:.1f}M parameters, {gguf_path.stat().st_size / 2**20:.1f} MiB "
          f"({gguf_path.name})", file=sys.stderr)


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
