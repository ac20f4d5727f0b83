"""Fuzz campaigns: hours-long, over every GPU of a host and over hosts sharing a database.

``ctsgen campaign start|resume|status|report DIR``: :mod:`ctsgen.campaign.store`
is the campaign directory, :mod:`ctsgen.campaign.worker` one device-owning
fuzzing process, :mod:`ctsgen.campaign.run` the host's workers and their
stopping, :mod:`ctsgen.campaign.report` the morning report.
"""

from ctsgen.errors import CtsgenError


class CampaignError(CtsgenError):
    """A campaign directory or option that cannot be used; the message says what would fix it."""
