"""Wrong: softmax_fraction stops at the first row that says "softmax"; a profile with PyTorch's
softmax in one attention and a Triton softmax in another has two."""

import math

EXPECTED = "you counted only"
SELECT = "softmax_fraction and mixed"


def amdahl_speedup(f, s):
    if not 0 <= f <= 1:
        raise ValueError(f"f = {f} must be a fraction between 0 and 1")
    if not s > 0:
        raise ValueError(f"s = {s} must be positive")
    return 1.0 / ((1.0 - f) + f / s)


def amdahl_ceiling(f):
    if not 0 <= f <= 1:
        raise ValueError(f"f = {f} must be a fraction between 0 and 1")
    return math.inf if f == 1 else 1.0 / (1.0 - f)


def softmax_fraction(profile):
    total = sum(row["device_time_us"] for row in profile)
    softmax = next(row for row in profile if "softmax" in row["name"].lower())
    return softmax["device_time_us"] / total


def largest_operator(profile):
    return max(profile, key=lambda row: row["device_time_us"])["name"]


def predict_speedup(profile, softmax_speedup):
    return amdahl_speedup(softmax_fraction(profile), softmax_speedup)
