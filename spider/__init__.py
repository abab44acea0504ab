"""The Scrapy discovery spider for sources without a complete feed, and the pipeline that
submits the article URLs it finds to the frontier."""
