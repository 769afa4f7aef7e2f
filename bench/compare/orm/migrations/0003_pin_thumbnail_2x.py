from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("orm", "0002_pinner_avatar"),
    ]

    operations = [
        migrations.AddField(
            model_name="pin",
            name="thumbnail_2x_key",
            field=models.CharField(blank=True, default="", max_length=255),
        ),
        migrations.AddField(
            model_name="pin",
            name="thumbnail_2x_width",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
    ]
