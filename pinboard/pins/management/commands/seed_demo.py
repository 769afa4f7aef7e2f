"""``python manage.py seed_demo``: pinners, boards, pins, likes, comments and follows.

Everything is made through the site's actions, so the demo data is exactly
what pinners would have made; users land on random shards as real ones do.
"""

from __future__ import annotations

import random

from django.core.management.base import BaseCommand

from pinboard.boards.actions import create_board
from pinboard.follows.actions import follow_board, follow_user
from pinboard.likes.actions import like
from pinboard.pins.actions import add_comment, create_pin, save_pin
from pinboard.pins.demo_images import demo_image
from pinboard.users.actions import sign_up
from pinboard.users.queries import user_id_for

NAMES = [
    "ada", "grace", "linus", "margaret", "alan", "barbara", "ken", "frances", "dennis", "radia",
    "edsger", "katherine", "donald", "hedy", "tim", "annie", "john", "sophie", "guido", "jean",
]  # fmt: skip
BOARDS = [
    ("Weeknight dinners", "Quick things to cook after work"),
    ("Tiny houses", "Small spaces, big ideas"),
    ("Trail running", "Routes and gear"),
    ("Mid-century chairs", ""),
    ("Watercolor", "Loose washes and palettes"),
    ("Garden", "What to plant next spring"),
    ("Typography", "Letterforms I love"),
    ("Travel: Japan", "Kyoto, Osaka, the Alps"),
]
COMMENTS = ["Love this!", "Saving for later.", "Where is this from?", "So good.", "Great colors."]


class Command(BaseCommand):
    help = "Fill the shard store with demo pinners, boards, pins, likes, comments and follows."

    def add_arguments(self, parser):  # type: ignore[no-untyped-def]
        parser.add_argument("--users", type=int, default=12, help="how many pinners (max 20)")
        parser.add_argument("--pins-per-board", type=int, default=6)
        parser.add_argument("--seed", type=int, default=2012)
        parser.add_argument(
            "--if-empty", action="store_true", help="do nothing if demo data exists"
        )

    def handle(self, *args, users: int, pins_per_board: int, seed: int, if_empty: bool, **options):  # type: ignore[no-untyped-def]
        if if_empty and user_id_for("username", NAMES[0]) is not None:
            self.stdout.write("demo data already present")
            return
        rng = random.Random(seed)
        pinners = [
            sign_up(name, f"{name}@example.com", "pinboard-demo")
            for name in NAMES[: max(1, min(users, 20))]
        ]
        boards, pins = [], []
        for pinner in pinners:
            for name, description in rng.sample(BOARDS, rng.randint(2, 4)):
                board = create_board(pinner["id"], name, description)
                boards.append(board)
                for i in range(pins_per_board):
                    pin = create_pin(
                        pinner["id"], board["id"], demo_image(rng, f"{board['slug']}-{i}.png"),
                        description=f"{name} #{i + 1}", link="https://example.com/",
                    )  # fmt: skip
                    pins.append(pin)
            self.stdout.write(f"  {pinner['username']}: boards and pins made")
        for pinner in pinners:
            others = [p for p in pinners if p["id"] != pinner["id"]]
            for other in rng.sample(others, min(len(others), 4)):
                follow_user(pinner["id"], other["id"])
            for board in rng.sample(boards, min(len(boards), 3)):
                if board["owner_id"] != pinner["id"]:
                    follow_board(pinner["id"], board["id"])
            for pin in rng.sample(pins, min(len(pins), 10)):
                like(pinner["id"], pin["id"])
            for pin in rng.sample(pins, min(len(pins), 3)):
                add_comment(pinner["id"], pin["id"], rng.choice(COMMENTS))
            own = [b for b in boards if b["owner_id"] == pinner["id"]]
            for pin in rng.sample(pins, min(len(pins), 2)):
                if pin["owner_id"] != pinner["id"]:
                    save_pin(pinner["id"], pin["id"], rng.choice(own)["id"])
        self.stdout.write(
            self.style.SUCCESS(f"{len(pinners)} pinners, {len(boards)} boards, {len(pins)} pins")
        )
        self.stdout.write("log in as any of them (e.g. ada) with the password pinboard-demo")
