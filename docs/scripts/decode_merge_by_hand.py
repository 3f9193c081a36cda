#!/usr/bin/env python3
"""Split-KV decode on numbers small enough to check by hand (chapter 9).

One query head, six cached keys with scores s = [2, 0, 1, 4, 3, 1] and one-number values
v = [10, 20, 30, 40, 50, 60], split into three chunks of two keys, as three programs would take them.
Each chunk gives its partial (m, l, acc); the merge brings them to the common max and adds. The
script prints every number the chapter uses and asserts that the merged output equals attention
computed directly. Plain Python: `python docs/scripts/decode_merge_by_hand.py`; the chapter includes
its output (docs/assets/decode-merge-by-hand.txt, checked against a fresh run by tests/test_site.py).
"""

from math import exp, isclose

# --8<-- [start:partials]
s = [2.0, 0.0, 1.0, 4.0, 3.0, 1.0]  # scores of one query head against six cached keys (scale applied)
v = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]  # the value of each key (one number instead of D)
chunks = [(0, 2), (2, 4), (4, 6)]  # three splits of two keys: three programs


def partial(start, end):
    """What one split-KV program stores: its max, and its sum and weighted sum relative to that max."""
    m = max(s[start:end])
    p = [exp(sj - m) for sj in s[start:end]]
    return m, sum(p), sum(pj * vj for pj, vj in zip(p, v[start:end]))


partials = [partial(start, end) for start, end in chunks]
# --8<-- [end:partials]

# --8<-- [start:merge]
m = max(m_s for m_s, _, _ in partials)  # the common max
w = [exp(m_s - m) for m_s, _, _ in partials]  # each partial's rescaling factor
l = sum(w_s * l_s for w_s, (_, l_s, _) in zip(w, partials))
acc = sum(w_s * acc_s for w_s, (_, _, acc_s) in zip(w, partials))
out = acc / l
# --8<-- [end:merge]


def main() -> None:
    for (start, end), (m_s, l_s, acc_s) in zip(chunks, partials):
        print(f"split keys {start}-{end - 1}: s = {s[start:end]}, m = {m_s:g}, l = {l_s:.6f}, acc = {acc_s:.6f}")
    print(f"merge: m = {m:g}, factors exp(m_s - m) = {', '.join(f'{x:.6f}' for x in w)}")
    print(f"merge: l = {l:.6f}, acc = {acc:.6f}, out = acc / l = {out:.6f}")

    # Without the rescaling: the partials added as they are, each relative to its own max.
    wrong = sum(a for _, _, a in partials) / sum(b for _, b, _ in partials)
    print(f"added without rescaling: out = {wrong:.6f} (wrong)")

    # Directly, all six keys at once.
    m_direct = max(s)
    p = [exp(sj - m_direct) for sj in s]
    direct = sum(pj * vj for pj, vj in zip(p, v)) / sum(p)
    print(f"direct: softmax(s) = [{', '.join(f'{pj / sum(p):.6f}' for pj in p)}], out = {direct:.6f}")
    assert isclose(out, direct, rel_tol=1e-12), (out, direct)
    assert not isclose(wrong, direct, rel_tol=1e-3)
    print("split-KV merge == direct: OK")


if __name__ == "__main__":
    main()
