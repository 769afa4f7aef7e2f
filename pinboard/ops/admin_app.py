"""``django.contrib.admin`` on the operators' site: INSTALLED_APPS names this app config.

(A module of its own: it is imported while apps load, before models may be.)
"""

from django.contrib.admin.apps import AdminConfig


class OpsAdminConfig(AdminConfig):
    default_site = "pinboard.ops.admin_site.OpsAdminSite"
