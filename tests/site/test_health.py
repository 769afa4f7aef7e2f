"""``/healthz`` says to anyone only that the process is up; ``/readyz``, the load balancer's,
says which config versions it serves, and never where its config comes from.
(With a real config source, under gunicorn: test_config_live.py.)"""

from __future__ import annotations

from django.test import Client

from pinboard.data_plane import plane


def test_liveness_says_nothing_about_internals(client: Client) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json() == {"ok": True}
    assert response["Cache-Control"] == "no-store"


def test_readiness_says_the_config_versions_served(client: Client) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    report = response.json()
    assert report["ok"] is True and report["config"] == plane().versions
    assert set(report) == {"ok", "process", "config", "source"}
