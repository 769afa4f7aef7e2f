"""The library has no data model of its own: each store, cached store and command line
takes the catalog of the site that uses it."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from shardstore import (
    Catalog,
    ObjectType,
    Relation,
    Store,
    Topology,
    UnknownType,
    compose,
    init_shards,
)
from shardstore.cache import CachedStore, LocalPool
from shardstore.cli import main
from shardstore.control.file_source import FileSource
from tests.config_documents import sqlite_shard_map

from .catalog import CATALOG

RECIPES = Catalog(
    types=[ObjectType("cook", 1, "cooks"), ObjectType("recipe", 2, "recipes", pool="recipes")],
    relations=[Relation("cook_has_recipes", "cook", "recipe")],
    lookups=[],
)


def cli(*args: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(args), out=out, err=err)
    return status, out.getvalue() + err.getvalue()


def test_a_store_holds_the_tables_of_the_catalog_it_is_given(tmp_path: Path) -> None:
    store = Store(Topology.single_host(f"sqlite://{tmp_path}", shard_count=4), catalog=RECIPES)
    try:
        init_shards(store)
        cook = store.objects("cook").create(1, {"name": "ada"})
        recipe = store.objects("recipe").create(1, {"text": "hello"})
        store.mapping("cook_has_recipes").add(cook, recipe)
        assert store.mapping("cook_has_recipes").page(cook).ids == [recipe]
        with pytest.raises(UnknownType, match="note"):
            store.objects("note")  # another catalog's types are not this store's
    finally:
        store.close()


def test_a_cached_store_names_the_pools_its_catalog_needs(tmp_path: Path) -> None:
    store = Store(Topology.single_host(f"sqlite://{tmp_path}", shard_count=4), catalog=RECIPES)
    try:
        with pytest.raises(ValueError, match="no cache pool named objects, recipes"):
            CachedStore(store, {"lists": LocalPool("lists")})
        pools = {name: LocalPool(name) for name in ("lists", "objects", "recipes")}
        assert CachedStore(store, pools).pools.keys() == pools.keys()
    finally:
        store.close()


def test_decode_names_the_type_only_with_a_catalog() -> None:
    note = compose(3, CATALOG.type("note").type_id, 42)
    assert cli("decode", str(note)) == (0, f"{note}: shard 3, type 1 (no --catalog), local 42\n")
    status, out = cli("--catalog", "tests.shardstore.catalog:CATALOG", "decode", str(note))
    assert (status, out) == (0, f"{note}: shard 3, type 1 (note), local 42\n")


def test_init_needs_a_catalog_and_makes_its_tables(tmp_path: Path) -> None:
    source = FileSource(tmp_path / "config")
    source.publish("shards", sqlite_shard_map(tmp_path / "shards"), author="t", reason="first")
    topology = ["--topology", str(tmp_path / "config")]

    status, out = cli(*topology, "init")
    assert status == 2 and "--catalog is required" in out
    assert not (tmp_path / "shards").exists()  # nothing made

    status, out = cli("--catalog", "tests.shardstore.test_catalog_from_user:RECIPES", *topology, "init")  # fmt: skip
    assert status == 0 and "16 shards ready" in out, out
    store = Store(Topology.from_json(source.current("shards").document), catalog=RECIPES)
    try:
        recipe = store.objects("recipe").create(5, {"n": 1})
        assert store.objects("recipe").get(recipe) == {"id": recipe, "n": 1}
    finally:
        store.close()


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("no_such_module_here:CATALOG", "No module named 'no_such_module_here'"),
        ("tests.shardstore.catalog:MISSING", "has no attribute 'MISSING'"),
        ("tests.config_documents:shard_map", "a function, not a Catalog"),
    ],
)
def test_a_wrong_catalog_is_refused_with_its_reason(name: str, said: str) -> None:
    status, out = cli("--catalog", name, "decode", "1")
    assert status == 2 and said in out, out
