"""Shared test helpers (real servers, real repos); no mocks of our own modules."""
