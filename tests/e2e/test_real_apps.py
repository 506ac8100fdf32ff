"""Real applications of three frameworks (Django's admin, Streamlit, Gradio), started on loopback: each task
a person would do there is driven only through the `tabpilot` CLI, by reading snapshots and acting on the
refs of controls found by role and name, and checked in the app's own state (its database, its files)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from app_servers import App, missing, running
from app_tasks import CliDriver, log_out, tag_for, tasks_of
from harness import Tabpilot

OFF_LOOPBACK = (
    "performance.getEntriesByType('resource').map(e => e.name)"
    ".filter(u => !/^(https?|wss?):\\/\\/(127\\.0\\.0\\.1|localhost)[:/]/.test(u) && !u.startsWith('data:'))"
)


@pytest.fixture
def tp() -> Iterator[Tabpilot]:
    """A browser of its own for each app: one app that wedges the browser does not fail the others."""
    env = Tabpilot()
    try:
        env.run("browser", "launch", "--headless", timeout=90)
        yield env
    finally:
        env.cleanup()


def started(name: str) -> Iterator[App]:
    reason = missing(name)
    if reason:
        pytest.skip(reason)
    with running(name) as app:
        yield app


@pytest.fixture(scope="module")
def django() -> Iterator[App]:
    yield from started("django")


@pytest.fixture(scope="module")
def streamlit() -> Iterator[App]:
    yield from started("streamlit")


@pytest.fixture(scope="module")
def gradio() -> Iterator[App]:
    yield from started("gradio")


def run_tasks(tp: Tabpilot, app: App) -> CliDriver:
    driver = CliDriver(tp)
    for task in tasks_of(app.name):
        if task.name == "log in":
            log_out(app)
        tag = tag_for(task, app, 1)
        read = driver.run_task(task, app, tag)
        task.check(app, tag, read)
    # every control was found by its role and name, none only by its place beside another
    assert driver.by_place == [], driver.by_place
    assert tp.run("eval", OFF_LOOPBACK).json == []
    return driver


def test_django_admin_log_in_add_with_autocomplete_find_and_edit(tp: Tabpilot, django: App) -> None:
    driver = run_tasks(tp, django)
    # Once more, as the bench's later runs do: reading click listeners with CDP's `pierce` made this
    # tab's renderer hang at the log-in's navigation.
    (log_in,) = [task for task in tasks_of("django") if task.name == "log in"]
    log_out(django)
    log_in.check(django, "again", driver.run_task(log_in, django, "again"))


def test_streamlit_add_through_a_menu_read_the_total_change_settings(tp: Tabpilot, streamlit: App) -> None:
    run_tasks(tp, streamlit)


def test_gradio_create_with_autocomplete_look_up_and_close(tp: Tabpilot, gradio: App) -> None:
    run_tasks(tp, gradio)
