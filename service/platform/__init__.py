"""What platforms and spectators follow besides commands: lobby, activity, spectators, webhooks.

Processes that follow the global feed and keep their state next to the events
(`process_store.py`): the lobby's read model of every table (`lobby.py`), the active-tables
tracker (`activity.py`), the spectators' delay (`spectating.py`) and the signed webhook
deliveries (`webhooks.py`, run in a process of their own by `webhook_process.py`).
"""
