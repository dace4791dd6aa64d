from django.db import models


class BaseModel(models.Model):
    """Every model carries when it was created (indexed) and last updated."""

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True
