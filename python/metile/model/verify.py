"""A compiled model checked against its framework: the same prompt through both, then greedy
decoding steps (teacher-forced on the framework's tokens, so one disagreement does not change
every later step). Reported: the logits' largest absolute error, the mean KL divergence of the
next-token distributions, and how many greedy next tokens agree."""

import numpy as np

# The gate on a whole model: next tokens agree at all but one step, and the next-token
# distributions are close (KL in nats, per step, by activation dtype).
KL_LIMITS = {"f32": 1e-4, "f16": 1e-2, "bf16": 2e-2}


def _log_softmax(logits):
    shifted = logits - logits.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def run_steps(front, model, prompt, steps, tokens=None):
    """Logits of the prompt's last position and of each decoding step ([steps + 1, V]) and the
    greedy tokens; with `tokens`, those are fed instead of the model's own choices."""
    cache = front.new_cache(model)
    rows = [front.forward(model, list(prompt), cache)[-1]]
    chosen = []
    for step in range(steps):
        chosen.append(int(np.argmax(rows[-1])))
        feed = chosen[-1] if tokens is None else tokens[step]
        rows.append(front.forward(model, [feed], cache)[-1])
    return np.stack(rows), chosen


def compare(reference, logits, reference_tokens, dtype, steps, kl_limit=None):
    p_log, q_log = _log_softmax(reference), _log_softmax(logits)
    kl = float(np.mean(np.sum(np.exp(p_log) * (p_log - q_log), -1)))
    agree = int(sum(int(np.argmax(row)) == token
                    for row, token in zip(logits[:steps], reference_tokens)))
    limit = KL_LIMITS.get(dtype, KL_LIMITS["f16"]) if kl_limit is None else float(kl_limit)
    return {"max_abs_error": float(np.max(np.abs(reference - logits))), "kl": kl,
            "kl_limit": limit, "agreement": agree, "steps": steps,
            "passed": agree >= steps - 1 and kl <= limit}
