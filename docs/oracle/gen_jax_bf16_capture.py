"""Record a JAX GPU capture shaped like real training: a bf16 transformer stack scanned over its
layers (an XLA while loop), a jitted train step and a separate jitted eval step in every profiled
step (two XLA modules per step), marked with StepTraceAnnotation (needs a GPU; not run by CI).

usage: gen_jax_bf16_capture.py LOGDIR STEPS [--d-model N] [--layers N]

Writes LOGDIR/plugins/profile/<run>/<host>.xplane.pb, .trace.json.gz and perfetto_trace.json.gz
(JAX's own writers). XProf's view of the XPlane comes from ../shared/tools/xprof_lines.py.
"""
import sys
import jax, jax.numpy as jnp


def arg(flag, default):
    return int(sys.argv[sys.argv.index(flag) + 1]) if flag in sys.argv else default


logdir, steps = sys.argv[1], int(sys.argv[2])
d, layers, heads = arg("--d-model", 1024), arg("--layers", 4), 8
batch, seq = 8, 512
bf = jnp.bfloat16


def init(key):
    ks = jax.random.split(key, 6)
    shape = {"wq": (d, d), "wk": (d, d), "wv": (d, d), "wo": (d, d), "w1": (d, 4 * d), "w2": (4 * d, d)}
    return {n: (jax.random.normal(k, (layers,) + s) * 0.02).astype(bf)
            for (n, s), k in zip(shape.items(), ks)}


def block(x, p):
    b, s, _ = x.shape
    h = x / jnp.sqrt(jnp.mean(x.astype(jnp.float32) ** 2, -1, keepdims=True) + 1e-6).astype(bf)
    q, k, v = (jnp.reshape(h @ p[w], (b, s, heads, d // heads)) for w in ("wq", "wk", "wv"))
    a = jax.nn.softmax(jnp.einsum("bqhd,bkhd->bhqk", q, k).astype(jnp.float32) / 8.0, -1).astype(bf)
    x = x + jnp.reshape(jnp.einsum("bhqk,bkhd->bqhd", a, v), (b, s, d)) @ p["wo"]
    return x + jax.nn.gelu(x @ p["w1"]) @ p["w2"], None


def loss(p, x):
    y, _ = jax.lax.scan(block, x, p)
    return jnp.mean(y.astype(jnp.float32) ** 2)


@jax.jit
def train_step(p, x):
    g = jax.grad(loss)(p, x)
    return jax.tree_util.tree_map(lambda w, g: w - (1e-3 * g).astype(bf), p, g)


@jax.jit
def eval_step(p, x):
    return loss(p, x)


key = jax.random.key(0)
p = init(key)
x = jax.random.normal(jax.random.key(1), (batch, seq, d)).astype(bf)
p = train_step(p, x); jax.block_until_ready(eval_step(p, x))
with jax.profiler.trace(logdir, create_perfetto_trace=True):
    for i in range(steps):
        with jax.profiler.StepTraceAnnotation("train", step_num=i):
            p = train_step(p, x)
            jax.block_until_ready(eval_step(p, x))
print("done", float(eval_step(p, x)))
