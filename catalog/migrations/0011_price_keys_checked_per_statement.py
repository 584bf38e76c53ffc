import django.db.models.deletion
from django.db import migrations, models

# The instance type and region keys of prices and of their history are checked by PostgreSQL
# once per statement instead of once per row.
#
# A foreign key constraint runs a trigger for every row written: a refresh that finds 100,000
# new prices spent ~0.8 s of PostgreSQL's ~2.3 s at commit on those checks (bench/RESULTS.md,
# "Issue 15 on a quiet machine, 2026-12-05", "Ingest"), and PriceHistory had lost its keys to
# the same cost (0009). These triggers check the same rule over a whole statement's rows at once, from its
# transition table: every key must name a row of the referenced table, which is locked FOR KEY
# SHARE as the constraint's own check locks it (a concurrent delete waits for the writer's
# commit, then fails). On the referenced side, deleting, re-keying or truncating instance types
# or regions that prices or history still name fails as the constraint would. What changes is
# only when: at the end of the statement instead of at commit (no writer inserts a price before
# its instance type), and Django's on_delete (PROTECT) is applied first as before.
#
# PostgreSQL only: on SQLite the keys are Django's own (on_delete), as they are on any backend
# for the scrape run (0007, 0009).

CHILDREN = [
    ("catalog_price", "instance_type_id", "catalog_instancetype"),
    ("catalog_price", "region_id", "catalog_region"),
    ("catalog_pricehistory", "instance_type_id", "catalog_instancetype"),
    ("catalog_pricehistory", "region_id", "catalog_region"),
]
PARENTS = {
    "catalog_instancetype": [("catalog_price", "instance_type_id"),
                             ("catalog_pricehistory", "instance_type_id")],
    "catalog_region": [("catalog_price", "region_id"), ("catalog_pricehistory", "region_id")],
}  # fmt: skip

FUNCTIONS = r"""
CREATE FUNCTION catalog_key_check() RETURNS trigger LANGUAGE plpgsql AS $$
-- The rows written name existing rows of the referenced table (TG_ARGV: column, table), which
-- stay locked FOR KEY SHARE until commit. Statement level: the keys of the statement's new rows
-- (transition table new_rows, read once); row level: the key of the row updated.
DECLARE
    keys bigint[];
    missing bigint;
BEGIN
    IF TG_LEVEL = 'STATEMENT' THEN
        EXECUTE format('SELECT array_agg(k) FROM (SELECT DISTINCT %I AS k FROM new_rows) s '
                       'WHERE k IS NOT NULL', TG_ARGV[0]) INTO keys;
    ELSE
        EXECUTE format('SELECT array_remove(ARRAY[($1).%I], NULL)', TG_ARGV[0])
            USING NEW INTO keys;
    END IF;
    IF coalesce(cardinality(keys), 0) = 0 THEN
        RETURN NULL;
    END IF;
    EXECUTE format(
        'SELECT k FROM unnest($1) k WHERE k NOT IN '
        '(SELECT r.id FROM %I r WHERE r.id = ANY($1) FOR KEY SHARE OF r) LIMIT 1',
        TG_ARGV[1]) USING keys INTO missing;
    IF missing IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation',
            MESSAGE = format('insert or update on table "%s" violates its key: %s=(%s) is not '
                             'present in table "%s"', TG_TABLE_NAME, TG_ARGV[0], missing,
                             TG_ARGV[1]);
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION catalog_key_referenced_check() RETURNS trigger LANGUAGE plpgsql AS $$
-- No row of the tables named in TG_ARGV (pairs: table, column) names an id this statement
-- removed: deleted (old_rows), re-keyed (old_rows but not new_rows) or truncated (every id).
DECLARE
    i int := 0;
    gone text;
    found bigint;
BEGIN
    gone := CASE TG_OP
        WHEN 'DELETE' THEN 'SELECT id FROM old_rows'
        WHEN 'UPDATE' THEN 'SELECT id FROM old_rows EXCEPT SELECT id FROM new_rows'
        ELSE NULL END;
    WHILE i < TG_NARGS LOOP
        IF gone IS NULL THEN
            EXECUTE format('SELECT %2$I FROM %1$I LIMIT 1', TG_ARGV[i], TG_ARGV[i + 1])
                INTO found;
        ELSE
            EXECUTE format('SELECT c.%2$I FROM %1$I c WHERE c.%2$I IN (%3$s) LIMIT 1',
                           TG_ARGV[i], TG_ARGV[i + 1], gone) INTO found;
        END IF;
        IF found IS NOT NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation',
                MESSAGE = format('%s on table "%s" violates the key of table "%s": id=(%s) is '
                                 'still named by %s', lower(TG_OP), TG_TABLE_NAME, TG_ARGV[i],
                                 found, TG_ARGV[i + 1]);
        END IF;
        i := i + 2;
    END LOOP;
    RETURN NULL;
END
$$;
"""


def _statements() -> list[str]:
    sql = [FUNCTIONS]
    for table, column, parent in CHILDREN:
        name = f"{table}_{column}_key"
        sql.append(
            f"CREATE TRIGGER {name}_insert AFTER INSERT ON {table} REFERENCING NEW TABLE AS "
            f"new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalog_key_check('{column}', "
            f"'{parent}')"
        )
        # Row level, and only when the key column is written and moves: the refresh's bulk
        # updates never set it; a model save() does, with the value it had.
        sql.append(
            f"CREATE TRIGGER {name}_update AFTER UPDATE OF {column} ON {table} FOR EACH ROW "
            f"WHEN (OLD.{column} IS DISTINCT FROM NEW.{column}) "
            f"EXECUTE FUNCTION catalog_key_check('{column}', '{parent}')"
        )
    for parent, children in PARENTS.items():
        args = ", ".join(f"'{table}', '{column}'" for table, column in children)
        call = f"EXECUTE FUNCTION catalog_key_referenced_check({args})"
        sql += [
            f"CREATE TRIGGER {parent}_keys_delete AFTER DELETE ON {parent} REFERENCING OLD "
            f"TABLE AS old_rows FOR EACH STATEMENT {call}",
            f"CREATE TRIGGER {parent}_keys_update AFTER UPDATE ON {parent} REFERENCING OLD "
            f"TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT {call}",
            f"CREATE TRIGGER {parent}_keys_truncate AFTER TRUNCATE ON {parent} "
            f"FOR EACH STATEMENT {call}",
        ]
    return sql


def _reverse_statements() -> list[str]:
    sql = []
    for table, column, _ in CHILDREN:
        sql += [
            f"DROP TRIGGER {table}_{column}_key_insert ON {table}",
            f"DROP TRIGGER {table}_{column}_key_update ON {table}",
        ]
    for parent in PARENTS:
        sql += [f"DROP TRIGGER {parent}_keys_{event} ON {parent}"
                for event in ("delete", "update", "truncate")]  # fmt: skip
    return sql + [
        "DROP FUNCTION catalog_key_check()",
        "DROP FUNCTION catalog_key_referenced_check()",
    ]


def _run(statements: list[str]):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for sql in statements:
            schema_editor.execute(sql, None)  # no parameters: the % of format() stay as written

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0010_price_no_updated_at_index"),
    ]

    operations = [
        migrations.AlterField(
            model_name="price",
            name="instance_type",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="prices",
                to="catalog.instancetype",
            ),
        ),
        migrations.AlterField(
            model_name="price",
            name="region",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="prices",
                to="catalog.region",
            ),
        ),
        migrations.RunPython(_run(_statements()), _run(_reverse_statements())),
    ]
