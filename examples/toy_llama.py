"""A Llama forward in pure Python (stdlib only): the model behind examples/toy_engine.py.

It reads the checkpoint `specconf export --format hf` writes (config.json + model.safetensors, HF tensor names,
Linear weights [out, in]) and runs it with a KV cache in float64 arithmetic over the float32 weights. It is
slow (milliseconds per token on the tiny presets) and exists so that the toy engine needs nothing but python3:
a real engine calls its own model where the toy engine calls this one.
"""
import array
import json
import math
import os
import struct

_DTYPES = {"F32": "f", "F64": "d"}


def read_safetensors(path):
    """{name: (shape, flat list of floats)} from a safetensors file (little-endian float32 or float64)."""
    with open(path, "rb") as f:
        (header_length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(header_length))
        data = f.read()
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        values = array.array(_DTYPES[entry["dtype"]])
        values.frombytes(data[begin:end])
        if values.itemsize > 1 and struct.pack("=H", 1) != struct.pack("<H", 1):
            values.byteswap()
        tensors[name] = (entry["shape"], values.tolist())
    return tensors


def _matrix(entry):
    """An [out, in] weight as a list of output rows."""
    (rows, cols), flat = entry
    return [flat[r * cols : (r + 1) * cols] for r in range(rows)]


def _matvec(rows, x):
    return [math.fsum(map(float.__mul__, row, x)) for row in rows]


def _rms_norm(x, weight, eps):
    scale = 1.0 / math.sqrt(math.fsum(v * v for v in x) / len(x) + eps)
    return [v * scale * w for v, w in zip(x, weight)]


class Llama:
    """A LlamaForCausalLM checkpoint directory, loaded once."""

    def __init__(self, directory):
        with open(os.path.join(directory, "config.json")) as f:
            config = json.load(f)
        tensors = read_safetensors(os.path.join(directory, "model.safetensors"))
        self.heads, self.kv_heads = config["num_attention_heads"], config["num_key_value_heads"]
        self.head_dim = config["head_dim"]
        self.eps, self.theta = config["rms_norm_eps"], config["rope_theta"]
        self.embed = _matrix(tensors["model.embed_tokens.weight"])
        self.layers = []
        for l in range(config["num_hidden_layers"]):
            p = f"model.layers.{l}."
            names = ["self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"]
            layer = {name.split(".")[1]: _matrix(tensors[p + name + ".weight"]) for name in names}
            layer["attn_norm"] = tensors[p + "input_layernorm.weight"][1]
            layer["mlp_norm"] = tensors[p + "post_attention_layernorm.weight"][1]
            self.layers.append(layer)
        self.norm = tensors["model.norm.weight"][1]
        self.lm_head = _matrix(tensors["lm_head.weight"])

    def _rope(self, head, position):
        half = self.head_dim // 2
        out = list(head)
        for i in range(half):
            angle = position / self.theta ** (2 * i / self.head_dim)
            c, s = math.cos(angle), math.sin(angle)
            out[i] = head[i] * c - head[i + half] * s
            out[i + half] = head[i + half] * c + head[i] * s
        return out

    def forward(self, cache, token, position):
        """Logits of one token at `position`, attending to the cache (per layer: keys, values) and itself."""
        x = list(self.embed[token])
        d, group = self.head_dim, self.heads // self.kv_heads
        for layer, (keys, values) in zip(self.layers, cache):
            h = _rms_norm(x, layer["attn_norm"], self.eps)
            q, k, v = (_matvec(layer[name], h) for name in ("q_proj", "k_proj", "v_proj"))
            keys.append([self._rope(k[j * d : (j + 1) * d], position) for j in range(self.kv_heads)])
            values.append([v[j * d : (j + 1) * d] for j in range(self.kv_heads)])
            attended = []
            for head in range(self.heads):
                qh, kv = self._rope(q[head * d : (head + 1) * d], position), head // group
                scores = [math.fsum(map(float.__mul__, qh, key[kv])) / math.sqrt(d) for key in keys]
                top = max(scores)
                weights = [math.exp(score - top) for score in scores]
                total = math.fsum(weights)
                attended += [math.fsum(w * value[kv][i] for w, value in zip(weights, values)) / total for i in range(d)]
            x = [a + b for a, b in zip(x, _matvec(layer["o_proj"], attended))]
            h = _rms_norm(x, layer["mlp_norm"], self.eps)
            gate, up = _matvec(layer["gate_proj"], h), _matvec(layer["up_proj"], h)
            x = [a + b for a, b in zip(x, _matvec(layer["down_proj"], [g / (1 + math.exp(-g)) * u for g, u in zip(gate, up)]))]
        return _matvec(self.lm_head, _rms_norm(x, self.norm, self.eps))

    def new_cache(self):
        return [([], []) for _ in self.layers]


def truncate(cache, length):
    """Drops the cache entries at positions >= length (rejected drafts)."""
    for keys, values in cache:
        del keys[length:], values[length:]


def argmax(logits):
    """The best token, ties to the lower id (specconf's convention)."""
    return max(range(len(logits)), key=lambda token: (logits[token], -token))
