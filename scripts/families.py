"""A program's family, the unit of every split by family (the fixed split, the k-fold, the
learning curves): its name without the trailing size, conv1x1_28x64x128 -> conv1x1. Needs nothing
but the standard library, so the shell scripts' inline Python imports it with PYTHONPATH=scripts."""
import os
import re


def family(name):
    """The family of a program name, or of its file's path (the directory and .npz dropped)."""
    name = os.path.basename(name)
    if name.endswith(".npz"):
        name = name[:-4]
    return re.sub(r"_[0-9][0-9x]*$", "", name)


def test_families(data="data/halide"):
    """The families of the fixed test split: those of DATA/layout/test's programs."""
    return {family(f) for f in os.listdir(f"{data}/layout/test") if f.endswith(".npz")}
