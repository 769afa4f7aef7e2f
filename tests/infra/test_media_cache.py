"""How long a public image keeps answering at its URL once the site has deleted its file (a
pin deleted, a board made secret, an avatar replaced, an account deleted): as long as a
cache may keep it. CloudFront keeps a file as long as the distribution's cache policy lets
the file's Cache-Control ask (AWS's rules, ``edge_seconds``); any other shared cache (a
proxy between a pinner and CloudFront) as long as its ``s-maxage`` says, else ``max-age``.
Both must be at most as long as a secret board's signed URLs live: one window for every
way an image stops being shown, in the Terraform and the settings as AWS reads them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pinboard.settings.s3 import s3_storages
from tests.infra import terraform_checks as checks

MEDIA = Path(__file__).resolve().parents[2] / "infra" / "terraform" / "modules" / "media"
#: AWS's managed cache policies, by ID: (min, default, max) TTL in seconds.
MANAGED = {
    "658327ea-f89d-4fab-a63d-7e88639e58f6": (1, 86400, 31536000),  # CachingOptimized
    "4135ea2d-6df8-44a3-9df3-4b5a84be39ad": (0, 0, 0),  # CachingDisabled
}
#: What the files stored before the header changed still carry: S3 keeps it with the file.
STORED_BEFORE = "public, max-age=31536000, immutable"


def storages() -> dict[str, Any]:
    return s3_storages("pinboard-media", "eu-west-1", "d111111abcdef8.cloudfront.net")


def promise() -> int:
    """How long a signed URL to a secret board's image lives, in seconds."""
    return int(storages()["private"]["OPTIONS"]["querystring_expire"])


def public_cache_control() -> str:
    return str(storages()["default"]["OPTIONS"]["object_parameters"]["CacheControl"])


def directive(cache_control: str, name: str) -> int | None:
    match = re.search(rf"(?:^|,)\s*{name}=(\d+)", cache_control)
    return int(match.group(1)) if match else None


def cache_policy_ttls() -> tuple[int, int, int]:
    """(min, default, max) TTL of the policy the image distribution's cache behaviour names."""
    parsed = checks.load_directory(MEDIA)
    (distribution,) = checks._resources(parsed, "aws_cloudfront_distribution").values()
    (behaviour,) = distribution["default_cache_behavior"]
    named = checks._unquote(behaviour["cache_policy_id"])
    if named in MANAGED:
        return MANAGED[named]
    match = re.fullmatch(r"\$\{aws_cloudfront_cache_policy\.(\w+)\.id\}", named)
    assert match, f"a cache policy this test does not know: {named}"
    policy = checks._resources(parsed, "aws_cloudfront_cache_policy")[match.group(1)]
    return int(policy["min_ttl"]), int(policy["default_ttl"]), int(policy["max_ttl"])


def edge_seconds(cache_control: str, ttls: tuple[int, int, int]) -> int:
    """How long CloudFront keeps a file with ``cache_control``: the origin's s-maxage (else
    max-age) held between the policy's minimum and maximum TTL; without either, the
    policy's default TTL."""
    least, default, most = ttls
    asked = directive(cache_control, "s-maxage")
    if asked is None:
        asked = directive(cache_control, "max-age")
    return default if asked is None else max(least, min(asked, most))


def test_cloudfront_keeps_no_image_longer_than_a_signed_url_lives() -> None:
    ttls = cache_policy_ttls()
    for header in (public_cache_control(), STORED_BEFORE, ""):
        assert edge_seconds(header, ttls) <= promise(), (header, ttls)


def test_no_other_shared_cache_keeps_an_image_longer() -> None:
    header = public_cache_control()
    shared = directive(header, "s-maxage")
    if shared is None:
        shared = directive(header, "max-age")
    assert header.startswith("public") and shared is not None and shared <= promise(), header


def test_the_reading_of_the_rules_catches_a_year() -> None:
    caching_optimized = MANAGED["658327ea-f89d-4fab-a63d-7e88639e58f6"]
    assert edge_seconds(STORED_BEFORE, caching_optimized) == 31536000
    assert edge_seconds("public, max-age=600, s-maxage=60", caching_optimized) == 60
    assert edge_seconds("public", (0, 300, 300)) == 300
    assert edge_seconds("public, max-age=0", (1, 300, 300)) == 1
