from django.db import models


class Author(models.Model):
    name = models.CharField(max_length=200, unique=True)

    def __str__(self) -> str:
        return self.name


class Book(models.Model):
    GENRES = (("novel", "Novel"), ("poetry", "Poetry"), ("essay", "Essay"), ("science", "Science"))

    title = models.CharField(max_length=200)
    author = models.ForeignKey(Author, on_delete=models.PROTECT)
    genre = models.CharField(max_length=20, choices=GENRES, default="novel")
    in_stock = models.BooleanField(default=True)

    def __str__(self) -> str:
        return self.title
