from django.contrib import admin

from shelf.models import Author, Book


@admin.register(Author)
class AuthorAdmin(admin.ModelAdmin):
    search_fields = ("name",)


@admin.register(Book)
class BookAdmin(admin.ModelAdmin):
    list_display = ("title", "author", "genre", "in_stock")
    list_filter = ("genre", "in_stock")
    search_fields = ("title",)
    # A select2 autocomplete, fed by the admin's JSON view as the person types.
    autocomplete_fields = ("author",)
