import textwrap

import pytest

# The 12-point plan of the local-versus-Ray test: 3 OP x 2 GC policies x 2 seeds of
# a short consistency run on a 1 GiB client drive (about a second of CPU each).
PLAN_12 = textwrap.dedent(
    """
    name = "12-point check"
    seeds = [1, 2]

    [[target]]
    preset = "client-7op"
    capacity = "1g"
    op = [0.07, 0.28, 0.5]
    victim = ["greedy", "fifo"]

    [[procedure]]
    name = "consistency"
    quick = true
    duration = "12s"

    [report]
    x = "op"
    y = "victim"
    """
)


@pytest.fixture
def plan12(tmp_path):
    p = tmp_path / "plan.toml"
    p.write_text(PLAN_12)
    return p
