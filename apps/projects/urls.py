from django.urls import path

from apps.projects.apis import ProjectDetailApi, ProjectListApi, ProjectResolveApi

# A malformed id never reaches the view: the uuid converter makes it an unknown URL, which
# the project-wide handler404 renders as the same 404 not_found a missing id gets.
urlpatterns = [
    path("", ProjectListApi.as_view(), name="project-list"),
    path("resolve", ProjectResolveApi.as_view(), name="project-resolve"),
    path("<uuid:project_id>", ProjectDetailApi.as_view(), name="project-detail"),
]
