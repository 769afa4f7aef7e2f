"""Counts kept in columns (bench/compare/copy.py fills them; the writes add to them)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("orm", "0003_pin_thumbnail_2x"),
    ]

    operations = [
        migrations.AddField(
            model_name="pinner",
            name="follower_count",
            field=models.IntegerField(default=0, db_default=0),
        ),
        migrations.AddField(
            model_name="pinner",
            name="following_count",
            field=models.IntegerField(default=0, db_default=0),
        ),
        migrations.AddField(
            model_name="pinner",
            name="board_count",
            field=models.IntegerField(default=0, db_default=0),
        ),
        migrations.AddField(
            model_name="pinner",
            name="pin_count",
            field=models.IntegerField(default=0, db_default=0),
        ),
        migrations.AddField(
            model_name="pinner",
            name="like_count",
            field=models.IntegerField(default=0, db_default=0),
        ),
        migrations.AddField(
            model_name="board", name="pin_count", field=models.IntegerField(default=0, db_default=0)
        ),
        migrations.AddField(
            model_name="board",
            name="follower_count",
            field=models.IntegerField(default=0, db_default=0),
        ),
        migrations.AddField(
            model_name="pin", name="like_count", field=models.IntegerField(default=0, db_default=0)
        ),
        migrations.AddField(
            model_name="pin", name="save_count", field=models.IntegerField(default=0, db_default=0)
        ),
        migrations.AddField(
            model_name="pin",
            name="comment_count",
            field=models.IntegerField(default=0, db_default=0),
        ),
    ]
