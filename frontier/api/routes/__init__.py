"""The API's routers, one module per area: sources, frontier views, import, dashboard."""
