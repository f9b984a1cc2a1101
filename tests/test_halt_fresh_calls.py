"""A call on an item not called before (another day, class, file) under a rising counter is
the next item of the work, whatever its template repeats; the same call again is not."""

from __future__ import annotations

from halt_scaffold import halt_at, say


def test_a_template_filled_for_the_next_item_while_progress_rises_runs_on() -> None:
    # the same sentence for each day (the subjects reordered), each call on a day not called
    # before, the counter rising: the next item of the work, not the same item counted again
    task = "Draw up next term's timetable for class 11A: five periods a day, no clashes."
    days = ["mon", "tue", "wed", "thu", "fri"]
    plans = [
        "maths, English, physics, chemistry, biology",
        "English, maths, chemistry, biology, physics",
        "physics, maths, English, biology, chemistry",
        "chemistry, English, maths, physics, biology",
        "biology, physics, English, maths, chemistry",
    ]
    steps = [
        say(
            "Loaded the teachers and labs of class 11A.",
            "load_constraints",
            True,
            progress=0,
            args={"class": "11A"},
        )
    ]
    steps += [
        say(f"Set class 11A for the day: {plan}.", "timetable_set_day", True, progress=i + 1,
            args={"class": "11A", "day": day})
        for i, (day, plan) in enumerate(zip(days, plans, strict=True))
    ]  # fmt: skip
    assert halt_at(steps, task) is None


def test_the_same_item_counted_again_under_a_rising_counter_still_halts() -> None:
    # the same call on the same item, said the same way, while the counter rises by itself
    task = "Import the 40 customer records from crm_export.csv."
    steps = [
        say(
            "Reading crm_export.csv: 40 records.",
            "read_csv",
            True,
            progress=0,
            args={"path": "crm_export.csv"},
        )
    ]
    steps += [
        say("Imported record ACME-7 (Acme Corp, Berlin).", "crm_import", True, progress=i,
            args={"id": "ACME-7"})
        for i in range(1, 7)
    ]  # fmt: skip
    assert halt_at(steps, task) is not None
