"""The operators' console under /ops/ (staff only: see access.py)."""

from django.urls import path

from . import action_views, job_views, operation_views, staff_accounts, views

urlpatterns = [
    path("", views.overview, name="ops_overview"),
    path("hosts/<str:host>/", views.host, name="ops_host"),
    path("decode/", views.decoder, name="ops_decode"),
    path("topology/", views.topology, name="ops_topology"),
    path("caches/", views.cache_pools, name="ops_caches"),
    path("backups/", views.backup_list, name="ops_backups"),
    path("celery/", views.celery, name="ops_celery"),
    path("journal/", views.journal_list, name="ops_journal"),
    path("journal/<str:entry_id>/", views.journal_entry, name="ops_journal_entry"),
    path("operations/", operation_views.open_operations, name="ops_operations"),
    path("operations/<str:operation_id>/<str:how>/", operation_views.end, name="ops_operation_end"),
    path("jobs/", job_views.job_list, name="ops_jobs"),
    path("jobs/<str:job_id>/", job_views.job_detail, name="ops_job"),
    path("jobs/<str:job_id>/resume/", job_views.job_resume, name="ops_job_resume"),
    path("confirm/", staff_accounts.confirm, name="ops_confirm"),
    path("actions/", action_views.index, name="ops_actions"),
    path("actions/<str:action>/", action_views.action, name="ops_action"),
]
