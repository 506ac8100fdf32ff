import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True
    dependencies = ()
    operations = (
        migrations.CreateModel(
            name="Author",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=200, unique=True)),
            ],
        ),
        migrations.CreateModel(
            name="Book",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("title", models.CharField(max_length=200)),
                (
                    "genre",
                    models.CharField(
                        choices=[
                            ("novel", "Novel"),
                            ("poetry", "Poetry"),
                            ("essay", "Essay"),
                            ("science", "Science"),
                        ],
                        default="novel",
                        max_length=20,
                    ),
                ),
                ("in_stock", models.BooleanField(default=True)),
                ("author", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, to="shelf.author")),
            ],
        ),
    )
