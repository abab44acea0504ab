from datetime import UTC, datetime, timedelta

from frontier.db import Database
from frontier.fetch_log import FetchLogRepository, LogEntry
from frontier.states import FetchKind, LogOutcome

T0 = datetime(2026, 1, 1, tzinfo=UTC)


async def test_record_page_and_prune(db: Database) -> None:
    log = FetchLogRepository(db)
    await log.record(
        [
            LogEntry(
                FetchKind.FEED,
                None,
                f"http://a.example/{i}",
                LogOutcome.OK,
                200,
                10,
                3,
                12,
                at=T0 + timedelta(minutes=i),
            )
            for i in range(5)
        ]
        + [
            LogEntry(
                FetchKind.PAGE,
                None,
                "http://b.example/",
                LogOutcome.FAILED,
                error="x" * 5000,
                at=T0 + timedelta(hours=2),
            )
        ]
    )
    newest = await log.recent(3)
    assert [row["url"] for row in newest] == [
        "http://b.example/",
        "http://a.example/4",
        "http://a.example/3",
    ]
    assert len(newest[0]["error"]) == 2000
    older = await log.recent(10, before_id=newest[-1]["id"], kind=FetchKind.FEED)
    assert [row["url"] for row in older] == [
        "http://a.example/2",
        "http://a.example/1",
        "http://a.example/0",
    ]
    deleted = await log.prune(timedelta(hours=1), now=T0 + timedelta(hours=1, minutes=2), batch=2)
    assert deleted == 2  # the rows at T0 and T0+1min
    assert len(await log.recent(10)) == 4
