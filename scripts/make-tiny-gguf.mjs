// Writes a tiny, deterministic llama-architecture GGUF model (~0.5 MB, all F32) for tests that
// need node-llama-cpp to load a real model without downloading one:
//   node scripts/make-tiny-gguf.mjs [out.gguf]   (default test/fixtures/models/tiny.gguf)
// or `import { writeTinyGguf } from './make-tiny-gguf.mjs'` from a test.
//
// File layout (GGUF v3, little-endian, https://github.com/ggml-org/ggml/blob/master/docs/gguf.md):
// "GGUF", version, tensor count, metadata count, the metadata key/values, one info record per
// tensor (name, dims innermost-first, ggml type, offset into the data section), zero padding to
// general.alignment (32), then the tensor data, each tensor starting on a 32-byte boundary.
//
// The vocabulary is SentencePiece-style ("llama"): <unk>, <s>, </s>, the 256 byte tokens
// <0x00>..<0xFF> and three more (see vocab()), so any text tokenizes, mostly as bytes, and no
// merges are needed. The weights are random (seeded mulberry32, so the sha256 is the same every
// run) except for one planted direction: every token embedding has 1.0 on dimension 0, which the
// residual stream keeps through both blocks, and output.weight reads that dimension as +1 for the
// byte tokens a-z and space and -8 for everything else, </s> included. The model therefore streams
// random lowercase letters and spaces and never ends by itself; tests stop it with maxTokens or an
// abort signal. (Greedy decoding, node-llama-cpp's default, settles into a short repeating pattern;
// with a temperature the letters are random.) The ChatML template is one node-llama-cpp recognizes,
// so it resolves to its ChatML wrapper. The whole model is so small that llama.cpp's thread pool
// costs more than the math: give createContext `threads: 1`, or 40 tokens can take seconds.
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const N_EMBD = 64;
const N_HEAD = 4;
const N_FF = 128;
const N_LAYER = 2;
const ALIGN = 32;

// GGUF metadata value types.
const T = { u32: 4, i32: 5, f32: 6, bool: 7, str: 8, arr: 9 };

const CHAT_TEMPLATE =
  '{% for message in messages %}' +
  "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}" +
  '{% endfor %}' +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

function mulberry32(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function vocab() {
  const tokens = ['<unk>', '<s>', '</s>'];
  const types = [2, 3, 3]; // UNKNOWN, CONTROL, CONTROL
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(6); // BYTE
  }
  // "▁" (SentencePiece's escaped space) must be a NORMAL token: as three byte tokens it would
  // detokenize to "▁" instead of " ". The ChatML markers as CONTROL tokens keep the chat framing
  // to one token each, so node-llama-cpp's default system prompt fits a 512-token context.
  tokens.push('\u2581', '<|im_start|>', '<|im_end|>');
  types.push(1, 3, 3); // NORMAL, CONTROL, CONTROL
  // Every pair of printable ASCII characters (space as "▁") as a NORMAL piece: SentencePiece
  // merges adjacent symbols into known pieces, so text costs half the tokens. patchbay's system
  // prompt with its tool definitions (~10k characters) then fits a context that evaluates fast.
  const symbols = ['\u2581'];
  for (let c = 0x21; c < 0x7f; c++) symbols.push(String.fromCharCode(c));
  for (const a of symbols) for (const b of symbols) (tokens.push(a + b), types.push(1));
  return { tokens, types, scores: tokens.map((_, i) => (i >= 262 ? -1 : 0)) };
}

/**
 * A scripted reply: the token pieces that spell `text`, each piece used once (pairs where they
 * are free, single bytes otherwise), so that "the next token depends only on this one" can
 * encode the whole sequence. Returns token ids, or throws when no such split exists.
 */
function replyTokens(text, tokens) {
  const id = new Map(tokens.map((t, i) => [t, i]));
  const piece = (s) => (s === ' ' ? '\u2581' : s);
  const single = (c) => (c === ' ' ? id.get('\u2581') : 3 + c.charCodeAt(0));
  const used = new Set([NEWLINE]);
  const out = [];
  const split = (at) => {
    if (at === text.length) return true;
    const pair = at + 1 < text.length ? id.get(piece(text[at]) + piece(text[at + 1])) : undefined;
    for (const [tok, len] of [
      [pair, 2],
      [single(text[at]), 1],
    ]) {
      if (tok === undefined || used.has(tok)) continue;
      used.add(tok);
      out.push(tok);
      if (split(at + len)) return true;
      used.delete(tok);
      out.pop();
    }
    return false;
  };
  if (!split(0)) throw new Error(`cannot spell ${JSON.stringify(text)} with distinct tokens`);
  if (out.length + 1 >= N_EMBD) throw new Error(`reply too long: ${out.length} tokens (at most ${N_EMBD - 2})`);
  return out;
}

/** The byte token of "\n": the last token of every prompt (after "<|im_start|>assistant\n"). */
const NEWLINE = 3 + 0x0a;

function tensors(nVocab, reply) {
  const rand = mulberry32(0x7a11b0);
  const noise = (n) => Float32Array.from({ length: n }, () => (rand() * 2 - 1) * 0.02);
  const ones = (n) => new Float32Array(n).fill(1);

  const embd = noise(N_EMBD * nVocab);
  const output = noise(N_EMBD * nVocab);
  for (let v = 0; v < nVocab; v++) {
    const byte = v - 3; // byte tokens start at id 3
    const wanted = byte === 0x20 || (byte >= 0x61 && byte <= 0x7a);
    embd[v * N_EMBD] = 1;
    output[v * N_EMBD] = wanted ? 1 : -8;
  }
  // A scripted reply: "\n", then each piece, then </s>, as a chain. Each chain token's
  // embedding is one dimension of its own (1..63, and nothing on dimension 0); the next piece
  // reads that dimension with weight 10, everything else 0. With the blocks' outputs zeroed the
  // residual stream is the current token's embedding, so greedy decoding follows the chain.
  if (reply) {
    const chain = [NEWLINE, ...reply, 2];
    chain.forEach((tok, i) => {
      if (i === chain.length - 1) return;
      const row = tok * N_EMBD;
      embd.fill(0, row, row + N_EMBD);
      embd[row + 1 + i] = 1;
      output[chain[i + 1] * N_EMBD + 1 + i] = 10;
    });
  }

  const list = [
    ['token_embd.weight', [N_EMBD, nVocab], embd],
    ['output_norm.weight', [N_EMBD], ones(N_EMBD)],
    ['output.weight', [N_EMBD, nVocab], output],
  ];
  for (let i = 0; i < N_LAYER; i++) {
    const p = `blk.${i}.`;
    list.push(
      [p + 'attn_norm.weight', [N_EMBD], ones(N_EMBD)],
      [p + 'attn_q.weight', [N_EMBD, N_EMBD], noise(N_EMBD * N_EMBD)],
      [p + 'attn_k.weight', [N_EMBD, N_EMBD], noise(N_EMBD * N_EMBD)],
      [p + 'attn_v.weight', [N_EMBD, N_EMBD], noise(N_EMBD * N_EMBD)],
      [p + 'attn_output.weight', [N_EMBD, N_EMBD], reply ? new Float32Array(N_EMBD * N_EMBD) : noise(N_EMBD * N_EMBD)],
      [p + 'ffn_norm.weight', [N_EMBD], ones(N_EMBD)],
      [p + 'ffn_gate.weight', [N_EMBD, N_FF], noise(N_EMBD * N_FF)],
      [p + 'ffn_up.weight', [N_EMBD, N_FF], noise(N_EMBD * N_FF)],
      [p + 'ffn_down.weight', [N_FF, N_EMBD], reply ? new Float32Array(N_FF * N_EMBD) : noise(N_FF * N_EMBD)],
    );
  }
  return list;
}

// Serializes into a list of Buffers; `align` pads with zeros up to the next multiple of ALIGN.
class Writer {
  parts = [];
  size = 0;
  push(buf) {
    this.parts.push(buf);
    this.size += buf.length;
  }
  num(kind, value) {
    const bytes = { u32: 4, i32: 4, f32: 4, u64: 8, bool: 1 }[kind];
    const b = Buffer.alloc(bytes);
    if (kind === 'u32') b.writeUInt32LE(value);
    else if (kind === 'i32') b.writeInt32LE(value);
    else if (kind === 'f32') b.writeFloatLE(value);
    else if (kind === 'u64') b.writeBigUInt64LE(BigInt(value));
    else b.writeUInt8(value ? 1 : 0);
    this.push(b);
  }
  str(s) {
    const b = Buffer.from(s, 'utf8');
    this.num('u64', b.length);
    this.push(b);
  }
  align() {
    const pad = (ALIGN - (this.size % ALIGN)) % ALIGN;
    if (pad) this.push(Buffer.alloc(pad));
  }
  // One metadata entry: key, value type, value (arrays: element type, count, elements).
  kv(key, kind, value) {
    this.str(key);
    if (Array.isArray(value)) {
      this.num('u32', T.arr);
      this.num('u32', T[kind]);
      this.num('u64', value.length);
      for (const v of value) kind === 'str' ? this.str(v) : this.num(kind, v);
    } else {
      this.num('u32', T[kind]);
      kind === 'str' ? this.str(value) : this.num(kind, value);
    }
  }
}

/**
 * `opts.reply`: a text the model answers every prompt with (greedy decoding), then </s> — e.g.
 * a function call in node-llama-cpp's syntax, to drive tool calls through the real library.
 */
export function writeTinyGguf(path, opts = {}) {
  const { tokens, types, scores } = vocab();
  const list = tensors(tokens.length, opts.reply === undefined ? undefined : replyTokens(opts.reply, tokens));
  const meta = [
    ['general.architecture', 'str', 'llama'],
    ['general.name', 'str', 'patchbay-tiny'],
    ['general.alignment', 'u32', ALIGN],
    ['general.file_type', 'u32', 0], // all F32
    ['llama.vocab_size', 'u32', tokens.length],
    ['llama.context_length', 'u32', 32768],
    ['llama.embedding_length', 'u32', N_EMBD],
    ['llama.block_count', 'u32', N_LAYER],
    ['llama.feed_forward_length', 'u32', N_FF],
    ['llama.attention.head_count', 'u32', N_HEAD],
    ['llama.attention.head_count_kv', 'u32', N_HEAD],
    ['llama.rope.dimension_count', 'u32', N_EMBD / N_HEAD],
    ['llama.attention.layer_norm_rms_epsilon', 'f32', 1e-5],
    ['llama.rope.freq_base', 'f32', 10000],
    ['tokenizer.ggml.model', 'str', 'llama'],
    ['tokenizer.ggml.tokens', 'str', tokens],
    ['tokenizer.ggml.scores', 'f32', scores],
    ['tokenizer.ggml.token_type', 'i32', types],
    ['tokenizer.ggml.bos_token_id', 'u32', 1],
    ['tokenizer.ggml.eos_token_id', 'u32', 2],
    ['tokenizer.ggml.unknown_token_id', 'u32', 0],
    ['tokenizer.ggml.add_bos_token', 'bool', true],
    ['tokenizer.ggml.add_eos_token', 'bool', false],
    ['tokenizer.chat_template', 'str', CHAT_TEMPLATE],
  ];

  const w = new Writer();
  w.push(Buffer.from('GGUF', 'latin1'));
  w.num('u32', 3);
  w.num('u64', list.length);
  w.num('u64', meta.length);
  for (const [key, kind, value] of meta) w.kv(key, kind, value);

  // Tensor infos; offsets are relative to the (aligned) start of the data section.
  let offset = 0;
  for (const [name, dims, data] of list) {
    w.str(name);
    w.num('u32', dims.length);
    for (const d of dims) w.num('u64', d);
    w.num('u32', 0); // GGML_TYPE_F32
    w.num('u64', offset);
    offset += Math.ceil(data.byteLength / ALIGN) * ALIGN;
  }
  w.align();
  for (const [, , data] of list) {
    w.push(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    w.align();
  }

  const file = Buffer.concat(w.parts, w.size);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, file);
  return { path, bytes: file.length, sha256: createHash('sha256').update(file).digest('hex') };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = process.argv[2] ? resolve(process.argv[2]) : fileURLToPath(new URL('../test/fixtures/models/tiny.gguf', import.meta.url));
  const { bytes, sha256 } = writeTinyGguf(out);
  console.log(`${out}: ${bytes} bytes, sha256 ${sha256}`);
}
