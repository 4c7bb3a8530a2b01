"""``trialscore demo``: the metrics of a 0/1 outcome matrix (the bundled example by default)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from trialscore.cli._app import app
from trialscore.cli._options import OutputFormat, bad_input, parse_ks
from trialscore.cli._render import Report, Section, render
from trialscore.errors import EvaluationError

if TYPE_CHECKING:
    import numpy as np

__all__ = ["demo"]


def _load_matrix(path: Path) -> np.ndarray:
    """A 0/1 CSV matrix (items x trials); lines starting with # are comments."""
    import numpy as np

    try:
        return np.loadtxt(path, delimiter=",", comments="#", dtype=np.int64, ndmin=2)
    except (OSError, ValueError) as exc:
        raise EvaluationError(f"{path}: cannot read a 0/1 CSV matrix: {exc}") from exc


@app.command()
def demo(
    matrix: Annotated[
        Path | None, typer.Option(help="CSV of 0/1 outcomes, items x trials (default: bundled example).")
    ] = None,
    k: Annotated[str, typer.Option(help="Comma-separated k values.")] = "1,3,5",
) -> None:
    """Score a 0/1 outcome matrix and print pass@k, pass^k, G-Pass@k and Bayes@N.

    Example: trialscore demo --k 1,2,5
    """
    from trialscore.core.bank import Bank
    from trialscore.core.estimators import bayes, g_pass_at_k_tau, mg_pass_at_k, pass_at_k, pass_hat_k

    with bad_input():
        if matrix is None:
            with resources.as_file(resources.files("trialscore") / "data" / "example_matrix.csv") as p:
                R = _load_matrix(p)
            source = "bundled example (12 cases x 10 trials)"
        else:
            R = _load_matrix(matrix)
            source = str(matrix)
        ks = parse_ks(k) or []
        bank = Bank.from_matrix(R)
        for value in ks:
            bank.check_k(value)
    header = ["k", "pass@k", "pass^k", "G-Pass@k τ=0.5", "mG-Pass@k"]
    rows = [
        [
            value,
            f"{pass_at_k(bank, value):.3f}",
            f"{pass_hat_k(bank, value):.3f}",
            f"{g_pass_at_k_tau(bank, value, 0.5):.3f}",
            f"{mg_pass_at_k(bank, value):.3f}",
        ]
        for value in ks
    ]
    mu, sigma = bayes(bank)
    flaky = int(((bank.c > 0) & (bank.c < bank.n)).sum())
    footer = (
        f"Bayes@N: {mu:.3f} ± {sigma:.3f}   items: {bank.items}   trials/item: {bank.trials}   "
        f"flaky items: {flaky}"
    )
    render(
        Report({}, [Section(header, rows, title=f"trialscore: {source}")], footer=[footer]),
        OutputFormat.table,
    )
