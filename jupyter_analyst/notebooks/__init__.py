"""Notebooks: the thread's audit-trail notebook."""
