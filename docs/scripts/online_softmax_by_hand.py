#!/usr/bin/env python3
"""Online softmax on a row small enough to check by hand (chapter 6).

The row x = [1, 3, 2, 5] is processed in two blocks of two, [1, 3] then [2, 5], keeping a running
maximum m and a running sum l (and, for attention, a running output acc over values v). The script
prints every intermediate number of the chapter's tables and asserts that the online result equals
the direct one. Plain Python: `python docs/scripts/online_softmax_by_hand.py`.
"""

from math import exp, isclose

# --8<-- [start:online]
x = [1.0, 3.0, 2.0, 5.0]
v = [10.0, 20.0, 30.0, 40.0]  # one value per position, as in attention
blocks = [(0, 2), (2, 4)]

m, l, acc = float("-inf"), 0.0, 0.0  # running max, running sum, running output
for start, end in blocks:
    m_new = max(m, max(x[start:end]))
    scale = exp(m - m_new)  # rescales everything summed so far: exp(-inf) = 0 on the first block
    p = [exp(xj - m_new) for xj in x[start:end]]
    l = l * scale + sum(p)
    acc = acc * scale + sum(pj * vj for pj, vj in zip(p, v[start:end]))
    m = m_new
    print(f"after block {x[start:end]}: m = {m:g}, scale = {scale:.6f}, l = {l:.6f}, acc = {acc:.6f}")

softmax_online = [exp(xj - m) / l for xj in x]
output_online = acc / l
# --8<-- [end:online]

# The direct computation, all at once.
m_direct = max(x)
l_direct = sum(exp(xj - m_direct) for xj in x)
softmax_direct = [exp(xj - m_direct) / l_direct for xj in x]
output_direct = sum(p * vj for p, vj in zip(softmax_direct, v))

print("softmax =", ", ".join(f"{p:.6f}" for p in softmax_online))
print(f"output = {output_online:.6f}")
assert isclose(l, l_direct, rel_tol=1e-12), (l, l_direct)
assert all(isclose(a, b, rel_tol=1e-12) for a, b in zip(softmax_online, softmax_direct))
assert isclose(output_online, output_direct, rel_tol=1e-12), (output_online, output_direct)

# Merging two partial results (split-KV decode): each side computed on its own block.
# --8<-- [start:merge]
def partial(xs, vs):
    m = max(xs)
    p = [exp(xj - m) for xj in xs]
    return m, sum(p), sum(pj * vj for pj, vj in zip(p, vs))


def merge(a, b):
    (m_a, l_a, acc_a), (m_b, l_b, acc_b) = a, b
    m = max(m_a, m_b)
    s_a, s_b = exp(m_a - m), exp(m_b - m)
    return m, l_a * s_a + l_b * s_b, acc_a * s_a + acc_b * s_b
# --8<-- [end:merge]


a, b = partial(x[:2], v[:2]), partial(x[2:], v[2:])
m_ab, l_ab, acc_ab = merge(a, b)
print(f"partial [1, 3]: m = {a[0]:g}, l = {a[1]:.6f}, acc = {a[2]:.6f}")
print(f"partial [2, 5]: m = {b[0]:g}, l = {b[1]:.6f}, acc = {b[2]:.6f}")
print(f"merged: m = {m_ab:g}, l = {l_ab:.6f}, output = {acc_ab / l_ab:.6f}")
assert isclose(l_ab, l_direct, rel_tol=1e-12) and isclose(acc_ab / l_ab, output_direct, rel_tol=1e-12)
print("online == direct: OK")
