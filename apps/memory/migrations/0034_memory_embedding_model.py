from django.db import migrations, models


class Migration(migrations.Migration):
    """``embedding_model``: the fingerprint of the model that made each vector.

    NOT NULL with a constant database default (""), which Postgres keeps in the catalogue: no
    table rewrite, no scan, so no check constraint has to be validated apart. 0035 stamps the
    rows embedded before it; "" on a row with a vector means "made by an unknown model" (what a
    writer of the previous release leaves during a rolling upgrade), which recall treats as
    pending and the background migration re-embeds. That is also why there is no CHECK that an
    embedded row names its model: the previous release, still running during the roll, would
    violate it.
    """

    dependencies = [("memory", "0033_distribution_keys")]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="embedding_model",
            field=models.CharField(blank=True, db_default="", default="", max_length=16),
        ),
    ]
