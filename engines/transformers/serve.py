#!/usr/bin/env python3
"""An OpenAI-compatible streaming server over transformers' continuous batching, for a GPU.

Why: the GPU machines this project borrows have PyTorch and transformers but no vLLM and no
network, so no model can be downloaded. This serves a model of a public architecture's exact
shape (default: Llama-3.1-8B, bf16) with random weights generated on the machine: the text is
noise, the timing is that of the real shape (every matrix, the 128K-entry vocabulary projection,
the KV cache). Requests go through `transformers`' continuous batching manager (paged attention,
requests joining and leaving the running batch at every step), the same engine as
`transformers serve --continuous-batching`, without its FastAPI dependencies.

Endpoints: GET /v1/models, GET /version, GET /health, POST /v1/completions and
POST /v1/chat/completions (streamed or not; `stream_options.include_usage`; `max_tokens`;
`ignore_eos`). Every generated token is one streamed chunk.

Tokens and text: the tokenizer is the small byte-level BPE that engines/llama-cpp/make_model.py
generates (8,192 entries, ChatML template); the model's vocabulary is the architecture's
(128,256). Prompts are tokenised with the small tokenizer, so every prompt id is a valid
embedding row; a generated id is shown as the text of id modulo the tokenizer's size, so each
token is one chunk of visible text. `usage` counts the model's tokens exactly.

Usage: python serve.py --tokenizer DIR [--shape llama-3.1-8b] [--port 8000]
       (needs torch with CUDA, transformers >= 5.x, aiohttp, tokenizers)
       python serve.py --tokenizer DIR --no-gpu-check   # the HTTP layer with a stand-in
                                                        # generator: for checking the protocol
                                                        # without a GPU, never for measuring
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
import time
from pathlib import Path

from aiohttp import web
from tokenizers import Tokenizer

# Public architectures' shapes (their config.json values); weights are random.
SHAPES = {
    "llama-3.1-8b": dict(
        vocab_size=128256,
        hidden_size=4096,
        intermediate_size=14336,
        num_hidden_layers=32,
        num_attention_heads=32,
        num_key_value_heads=8,
        max_position_embeddings=131072,
        rms_norm_eps=1e-5,
        rope_theta=500000.0,
        rope_scaling={
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
        tie_word_embeddings=False,
        bos_token_id=128000,
        eos_token_id=128001,
    ),
}

IM_START, IM_END = "<|im_start|>", "<|im_end|>"


def chatml(messages: list[dict]) -> str:
    """make_model.py's ChatML template, with the generation prompt."""
    text = "".join(f"{IM_START}{m.get('role', 'user')}\n{content_text(m)}{IM_END}\n" for m in messages)
    return text + f"{IM_START}assistant\n"


def content_text(message: dict) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):  # OpenAI content parts
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


class TransformersEngine:
    """Random-weight model of SHAPES[shape] behind transformers' continuous batching manager."""

    def __init__(self, shape: str, seed: int, max_batch_tokens: int | None):
        import torch
        import transformers
        from transformers import AutoModelForCausalLM, ContinuousBatchingConfig, GenerationConfig, LlamaConfig

        if not torch.cuda.is_available():
            sys.exit("serve.py: no CUDA GPU is visible to PyTorch; this engine needs one "
                     "(use --no-gpu-check only to test the HTTP layer)")
        torch.manual_seed(seed)
        started = time.perf_counter()
        config = LlamaConfig(**SHAPES[shape])
        with torch.device("cuda"):
            self.model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16, attn_implementation="sdpa")
        self.model.eval()
        params = sum(p.numel() for p in self.model.parameters())
        log(f"model {shape}: {params / 1e9:.2f}B parameters, bf16, random weights, "
            f"built in {time.perf_counter() - started:.1f} s on {torch.cuda.get_device_name(0)}")
        # EOS is decided per request (ignore_eos); greedy decoding keeps the work deterministic.
        generation = GenerationConfig(max_new_tokens=256, do_sample=False, eos_token_id=-1, pad_token_id=0)
        cb = ContinuousBatchingConfig(max_batch_tokens=max_batch_tokens) if max_batch_tokens else None
        self.manager = self.model.init_continuous_batching(
            generation_config=generation, continuous_batching_config=cb
        )
        # Capture the CUDA graphs before serving, so the first measured requests don't pay for it.
        warming = time.perf_counter()
        self.manager.warmup()
        log(f"continuous batching warmed up in {time.perf_counter() - warming:.1f} s")
        self.manager.start()
        self.eos = config.eos_token_id
        self.version = transformers.__version__
        self.max_model_len = config.max_position_embeddings
        log(f"continuous batching started (transformers {self.version}, torch {torch.__version__})")

    def submit(self, request_id: str, prompt_ids: list[int], max_tokens: int, ignore_eos: bool, on_output):
        """Registers the handler before the request enters the queue, so no output is missed."""
        self.manager.register_result_handler(
            request_id, lambda out: on_output(list(out.generated_tokens), out.is_finished(), out.error)
        )
        accepted = self.manager.add_request(
            prompt_ids, request_id=request_id, max_new_tokens=max_tokens,
            streaming=True, eos_token_id=-1 if ignore_eos else self.eos,
        )
        if accepted is None:
            fatal = self.manager.background_thread_status.fatal_error
            on_output([], True, f"engine refused the request: {fatal or 'not accepting requests'}")

    def cancel(self, request_id: str):
        self.manager.cancel_request(request_id)


class StandInEngine:
    """Emits one token every 20 ms per request, no model: only to check the HTTP layer."""

    version = "stand-in"
    max_model_len = 131072

    def __init__(self):
        self.tasks: dict[str, asyncio.Task] = {}

    def submit(self, request_id, prompt_ids, max_tokens, ignore_eos, on_output):
        async def emit():
            tokens = []
            await asyncio.sleep(0.001 * len(prompt_ids) / 100)
            for i in range(max_tokens):
                tokens.append((len(prompt_ids) * 31 + i * 17) % 128256)
                on_output(list(tokens), i + 1 == max_tokens, None)
                await asyncio.sleep(0.02)

        self.tasks[request_id] = asyncio.get_running_loop().create_task(emit())

    def cancel(self, request_id):
        task = self.tasks.pop(request_id, None)
        if task:
            task.cancel()


def log(message: str):
    print(f"[transformers serve] {message}", file=sys.stderr, flush=True)


class Server:
    def __init__(self, engine, tokenizer: Tokenizer, model_name: str):
        self.engine = engine
        self.tokenizer = tokenizer
        self.model_name = model_name
        self.ids = itertools.count(1)
        size = tokenizer.get_vocab_size()
        # Text of every tokenizer entry, decoded once; an entry that decodes to nothing (a
        # special token, half a UTF-8 character) shows as a space so each token is a visible chunk.
        self.token_text = [tokenizer.decode([i], skip_special_tokens=True) or " " for i in range(size)]

    def text_of(self, token: int) -> str:
        return self.token_text[token % len(self.token_text)]

    async def models(self, _request):
        return web.json_response({"object": "list", "data": [{
            "id": self.model_name, "object": "model", "owned_by": "transformers",
            "max_model_len": self.engine.max_model_len,
        }]})

    async def version(self, _request):
        return web.json_response({"name": "transformers", "version": self.engine.version,
                                  "mode": "continuous batching"})

    async def health(self, _request):
        return web.json_response({"status": "ok"})

    async def completions(self, request):
        return await self.generate(request, chat=False)

    async def chat(self, request):
        return await self.generate(request, chat=True)

    async def generate(self, request: web.Request, chat: bool):
        try:
            body = await request.json()
        except json.JSONDecodeError as error:
            return error_response(400, f"request body is not JSON: {error}")
        if chat:
            messages = body.get("messages")
            if not isinstance(messages, list) or not messages:
                return error_response(400, "'messages' must be a non-empty list")
            text = chatml(messages)
        else:
            text = body.get("prompt")
            if not isinstance(text, str):
                return error_response(400, "'prompt' must be a string")
        max_tokens = body.get("max_completion_tokens") or body.get("max_tokens") or 256
        if not isinstance(max_tokens, int) or max_tokens < 1:
            return error_response(400, f"max_tokens must be a positive integer, got {max_tokens!r}")
        prompt_ids = self.tokenizer.encode(text, add_special_tokens=False).ids
        if len(prompt_ids) + max_tokens > self.engine.max_model_len:
            return error_response(400, f"prompt ({len(prompt_ids)} tokens) plus max_tokens ({max_tokens}) "
                                       f"exceeds the model's {self.engine.max_model_len} tokens")
        exchange = Exchange(self, request, chat, body, len(prompt_ids))
        request_id = f"{'chatcmpl' if chat else 'cmpl'}-{next(self.ids)}"
        self.engine.submit(request_id, prompt_ids, max_tokens, bool(body.get("ignore_eos")), exchange.on_output)
        try:
            return await exchange.respond(request_id)
        except (asyncio.CancelledError, ConnectionResetError):
            self.engine.cancel(request_id)
            raise


class Exchange:
    """One request's answer: outputs arrive on the event loop; chunks go out as they come."""

    def __init__(self, server: Server, request: web.Request, chat: bool, body: dict, prompt_tokens: int):
        self.server, self.request, self.chat, self.body = server, request, chat, body
        self.prompt_tokens = prompt_tokens
        self.queue: asyncio.Queue = asyncio.Queue()
        self.sent = 0

    def on_output(self, tokens: list[int], finished: bool, error: str | None):
        self.queue.put_nowait((tokens, finished, error))

    def chunk(self, request_id: str, text: str | None, finish: str | None, first: bool = False) -> dict:
        if self.chat:
            delta = {"role": "assistant", "content": ""} if first else ({"content": text} if text else {})
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
        else:
            choice = {"index": 0, "text": text or "", "finish_reason": finish}
        return {"id": request_id, "object": "chat.completion.chunk" if self.chat else "text_completion",
                "created": int(time.time()), "model": self.server.model_name, "choices": [choice]}

    def usage(self) -> dict:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.sent,
                "total_tokens": self.prompt_tokens + self.sent}

    async def respond(self, request_id: str):
        if not self.body.get("stream"):
            return await self.respond_whole(request_id)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(self.request)

        async def send(obj):
            await response.write(f"data: {json.dumps(obj, separators=(',', ':'))}\n\n".encode())

        if self.chat:
            await send(self.chunk(request_id, None, None, first=True))
        while True:
            tokens, finished, error = await self.queue.get()
            if error:
                await send({"error": {"message": error, "type": "engine_error", "code": 500}})
                break
            for token in tokens[self.sent:]:
                self.sent += 1
                await send(self.chunk(request_id, self.server.text_of(token), None))
            if finished:
                await send(self.chunk(request_id, None, "length" if self.sent else "stop"))
                if (self.body.get("stream_options") or {}).get("include_usage"):
                    final = self.chunk(request_id, None, None)
                    final["choices"], final["usage"] = [], self.usage()
                    await send(final)
                break
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    async def respond_whole(self, request_id: str):
        while True:
            tokens, finished, error = await self.queue.get()
            if error:
                return error_response(500, error)
            if finished:
                break
        self.sent = len(tokens)
        text = "".join(self.server.text_of(t) for t in tokens)
        if self.chat:
            choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "length"}
        else:
            choice = {"index": 0, "text": text, "finish_reason": "length"}
        return web.json_response({"id": request_id, "object": "chat.completion" if self.chat else "text_completion",
                                  "created": int(time.time()), "model": self.server.model_name,
                                  "choices": [choice], "usage": self.usage()})


def error_response(status: int, message: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "invalid_request_error", "code": status}},
                             status=status)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokenizer", required=True, type=Path,
                        help="folder with tokenizer.json (engines/llama-cpp/make_model.py's hf-tokenizer)")
    parser.add_argument("--shape", default="llama-3.1-8b", choices=sorted(SHAPES))
    parser.add_argument("--model-name", default=None, help="name served in /v1/models (default: the shape)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--seed", type=int, default=20240531)
    parser.add_argument("--max-batch-tokens", type=int, default=None,
                        help="tokens per engine step (default: transformers' choice from GPU memory)")
    parser.add_argument("--no-gpu-check", action="store_true",
                        help="serve a stand-in generator (20 ms per token, no model) to check the HTTP layer")
    args = parser.parse_args()
    tokenizer_file = args.tokenizer / "tokenizer.json" if args.tokenizer.is_dir() else args.tokenizer
    if not tokenizer_file.is_file():
        sys.exit(f"serve.py: no tokenizer at {tokenizer_file}; run engines/llama-cpp/make_model.py --out DIR "
                 f"and pass DIR/hf-tokenizer")
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    engine = StandInEngine() if args.no_gpu_check else TransformersEngine(args.shape, args.seed, args.max_batch_tokens)
    server = Server(engine, tokenizer, args.model_name or args.shape)
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.add_routes([
        web.get("/v1/models", server.models), web.get("/version", server.version),
        web.get("/health", server.health), web.post("/v1/completions", server.completions),
        web.post("/v1/chat/completions", server.chat),
    ])
    log(f"listening on http://{args.host}:{args.port}/v1")
    web.run_app(app, host=args.host, port=args.port, print=None, access_log=None)


if __name__ == "__main__":
    main()
