"""A plan's commit point and its journal: a run that fails past its commit point stays open
for ``resume``, and the journal is part of the undo path (a record that cannot be written
fails its step, and stops no undo)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shardstore.control import recovery
from shardstore.control.journal_file import FileJournal
from shardstore.control.locks import FileLocks, Mark
from shardstore.control.plans import (
    JournalUnavailable,
    MemoryJournal,
    Plan,
    Step,
    StepFailed,
    run,
)


class FailingJournal(MemoryJournal):
    """A journal whose store fails (the control database failing over): ``begin``, or a
    record named in ``lose`` (a step's name, ``undo: <name>``, or ``finish``)."""

    def __init__(self, *, lose: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.lose = set(lose)

    def begin(self, plan: Plan, *, operator: str, dry_run: bool) -> Any:
        if "begin" in self.lose:
            raise ConnectionError("control database away")
        return super().begin(plan, operator=operator, dry_run=dry_run)

    def step(self, entry: Any, index: int, name: str, note: str) -> None:
        if name in self.lose:
            raise ConnectionError("control database away")
        super().step(entry, index, name, note)

    def finish(self, entry: Any, *, ok: bool, result: str, seconds: float) -> None:
        if "finish" in self.lose:
            raise ConnectionError("control database away")
        super().finish(entry, ok=ok, result=result, seconds=seconds)


def freeze_swap_publish(done: list[str], *, publish_fails: bool = False, in_force: bool = False) -> Plan:  # fmt: skip
    """Three steps as a failover has them: freeze and swap (undone), then a publish that
    commits, then the new master opened."""

    def action(name: str, fails: bool = False) -> Any:
        def do() -> str:
            if fails:
                raise RuntimeError(f"{name} lost its connection")
            done.append(name)
            return name

        return do

    return Plan(
        "demo",
        "",
        [
            Step("freeze", ("A",), action("freeze"), action("thaw")),
            Step("swap", ("A",), action("swap"), action("swap back")),
            Step(
                "publish",
                ("A",),
                action("publish", publish_fails),
                action("unpublish"),
                commits=True,
                took_effect=lambda: in_force,
            ),
            Step("open", ("A",), action("open"), action("close")),
        ],
    )


def test_a_step_whose_record_is_lost_is_undone_with_the_others(tmp_path: Path) -> None:
    done: list[str] = []
    journal = FailingJournal(lose=("swap", "undo: swap"))
    outcome = run(freeze_swap_publish(done), journal=journal, locks=FileLocks(tmp_path), operator="ada")  # fmt: skip
    assert not outcome.ok and "step 2 (swap) failed: control database away" in outcome.error
    # The swap ran, so it is undone; its undo's record is lost too, and the thaw still runs.
    assert done == ["freeze", "swap", "swap back", "thaw"]
    assert "the journal lost the undo of step 2" in outcome.error
    # The journal may lack what was undone: the entry is left for ``abort``, which undoes
    # again (every undo can run twice).
    (entry,) = journal.entries
    assert entry.ok is None and entry.steps[-1] == (1, "undo: freeze", "thaw")
    assert "`abort` undoes the rest" in outcome.error


def test_a_journal_that_cannot_begin_refuses_the_plan(tmp_path: Path) -> None:
    done: list[str] = []
    with pytest.raises(JournalUnavailable, match="nothing was changed"):
        run(freeze_swap_publish(done), journal=FailingJournal(lose=("begin",)), locks=FileLocks(tmp_path), operator="ada")  # fmt: skip
    assert done == []


def test_a_failure_after_the_commit_point_leaves_the_run_open_for_resume(
    tmp_path: Path,
) -> None:
    """The new master cannot be opened after the map names it: the publish stands, the run
    stays open (no other operation takes its hosts), and ``resume`` opens it."""
    done: list[str] = []
    journal, locks = MemoryJournal(), FileLocks(tmp_path)
    plan = freeze_swap_publish(done)
    opening = plan.steps[3]
    failing = Step("open", ("A",), lambda: (_ for _ in ()).throw(RuntimeError("refused")), opening.undo)  # fmt: skip
    outcome = run(Plan("demo", "", [*plan.steps[:3], failing]), journal=journal, locks=locks, operator="ada")  # fmt: skip
    assert not outcome.ok and "it stands; `resume` finishes the operation" in outcome.error
    assert done == ["freeze", "swap", "publish", "close"]
    (left,) = journal.open_operations()
    assert left.done == 3
    with pytest.raises(StepFailed, match="step 3 took effect"):
        recovery.abort(left, plan, journal=journal, locks=locks, operator="bob")
    assert recovery.resume(left, plan, journal=journal, locks=locks, operator="bob") == (
        "resumed by bob after step 3: 4 steps done"
    )
    assert done[-1] == "open" and journal.open_operations() == []


def test_a_committing_step_that_failed_before_taking_effect_is_undone(tmp_path: Path) -> None:
    done: list[str] = []
    journal = MemoryJournal()
    plan = freeze_swap_publish(done, publish_fails=True, in_force=False)
    outcome = run(plan, journal=journal, locks=FileLocks(tmp_path), operator="ada")
    assert not outcome.ok and "it stands" not in outcome.error
    assert done == ["freeze", "swap", "unpublish", "swap back", "thaw"]
    assert journal.open_operations() == []
    # In force though it raised (its answer lost): left open, never undone.
    done.clear()
    plan = freeze_swap_publish(done, publish_fails=True, in_force=True)
    outcome = run(plan, journal=journal, locks=FileLocks(tmp_path), operator="ada")
    assert "after step 3, which took effect" in outcome.error and done == ["freeze", "swap"]
    assert [op.done for op in journal.open_operations()] == [2]


def test_a_run_whose_end_was_not_recorded_is_closed_by_resume(tmp_path: Path) -> None:
    """Every step journaled, the end not (or the process died there): resume closes it as
    done; it runs nothing again."""
    done: list[str] = []
    journal, locks = FailingJournal(lose=("finish",)), FileLocks(tmp_path)
    plan = freeze_swap_publish(done)
    outcome = run(plan, journal=journal, locks=locks, operator="ada")
    assert not outcome.ok and "the journal could not record the end" in outcome.error
    (left,) = journal.open_operations()
    journal.lose.clear()
    assert recovery.resume(left, plan, journal=journal, locks=locks, operator="bob") == (
        "resumed by bob after step 4: 4 steps done"
    )
    assert done == ["freeze", "swap", "publish", "open"] and journal.open_operations() == []


def test_an_undo_that_fails_leaves_the_earlier_ones_to_run(tmp_path: Path) -> None:
    done: list[str] = []

    def cannot() -> str:
        raise RuntimeError("no replication account")

    def fail() -> str:
        raise RuntimeError("connection lost")

    plan = Plan(
        "demo",
        "",
        [
            Step(
                "freeze",
                ("A",),
                lambda: done.append("freeze") or "",
                lambda: done.append("thaw") or "",
            ),
            Step("swap", ("A",), lambda: done.append("swap") or "", cannot),
            Step("publish", ("A",), fail),
        ],
    )
    journal = MemoryJournal()
    outcome = run(plan, journal=journal, locks=FileLocks(tmp_path), operator="ada")
    assert done == ["freeze", "swap", "thaw"]  # the master is thawed all the same
    assert outcome.error == (
        "step 3 (publish) failed: connection lost; undoing step 2 (swap) failed: no"
        " replication account; see the journal; `abort` undoes the rest"
    )
    assert [op.done for op in journal.open_operations()] == [2]  # left open for abort
    assert journal.entries[0].steps[-2:] == [
        (2, "undo: swap", "FAILED: no replication account"),
        (1, "undo: freeze", "undone"),
    ]


def test_a_run_open_in_one_journal_holds_its_hosts_against_another(tmp_path: Path) -> None:
    """The site and ``python -m shardstore --journal FILE`` journal apart; the lock service
    they share carries each open run's mark, so neither runs over the other's dead run."""
    done: list[str] = []
    locks = FileLocks(tmp_path / "locks")
    site, standalone = MemoryJournal(), FileJournal(tmp_path / "ops.sqlite3")
    steps = freeze_swap_publish(done).steps
    failing = Step("open", ("A",), lambda: (_ for _ in ()).throw(RuntimeError("refused")))
    left = run(Plan("demo", "fail A over", [*steps[:3], failing]), journal=standalone, locks=locks, operator="ada")  # fmt: skip
    assert "it stands; `resume` finishes the operation" in left.error
    refused = run(freeze_swap_publish(done), journal=site, locks=locks, operator="bob")
    assert refused.error.startswith(f"an operation is open in the journal file {tmp_path.resolve()}/ops.sqlite3: fail A over (ada)")  # fmt: skip
    assert done == ["freeze", "swap", "publish"]  # the second run changed nothing

    (dead,) = standalone.open_operations()
    recovery.close(dead, journal=standalone, locks=locks, operator="ada")
    assert locks.marks() == []
    assert run(freeze_swap_publish(done), journal=site, locks=locks, operator="bob").ok


def test_a_mark_whose_entry_was_closed_is_removed_by_the_next_run_of_its_journal(
    tmp_path: Path,
) -> None:
    journal, locks = MemoryJournal(), FileLocks(tmp_path)
    locks.mark(Mark("lost", journal.name, ("A",), "an ending that could not remove its mark"))
    assert run(freeze_swap_publish([]), journal=journal, locks=locks, operator="ada").ok
    assert locks.marks() == []
