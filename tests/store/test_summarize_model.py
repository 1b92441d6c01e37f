"""With the real all-MiniLM-L6-v2: a summary of a conversation written for this test keeps its decisions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from embeddings import SentenceTransformerEmbedder
from store import Store, ThreadIn
from store.config import Config
from store.extract.summaries import summarize_thread
from store.extract.topics import update_topics
from store.records import MessageIn

pytestmark = pytest.mark.model

CONVERSATION = [
    (
        "user",
        "I'm starting a small SaaS for booking piano lessons and I need to pick a stack. The team is two "
        "people, both comfortable with Python. We expect maybe a few hundred teachers in the first year.",
    ),
    (
        "assistant",
        "For two Python developers, Django or FastAPI are the obvious candidates. Django gives you an "
        "admin, auth and migrations out of the box; FastAPI is lighter and async-first but you assemble "
        "more yourself. For a booking product with accounts, payments and an admin for support, Django "
        "usually gets you to a working product sooner.",
    ),
    ("user", "What about the database? Some people say MongoDB is easier to start with."),
    (
        "assistant",
        "Bookings are relational: teachers, students, lessons, time slots, payments, cancellations. "
        "You will want transactions and constraints so two students cannot take the same slot. "
        "PostgreSQL handles that well, has exclusion constraints for overlapping ranges, and Django's "
        "ORM supports it fully. MongoDB would make those guarantees your problem.",
    ),
    ("user", "Makes sense. We decided to use PostgreSQL 16 as the only database, no Redis for now."),
    (
        "assistant",
        "Good. You can add Redis later for caching or a task queue if you need it; Postgres can also "
        "serve as a simple queue with SKIP LOCKED at your scale.",
    ),
    ("user", "Where should we host it? We are in Germany and most teachers will be in the EU."),
    (
        "assistant",
        "Options that keep data in the EU: Hetzner Cloud (cheap VMs, you manage everything), "
        "Fly.io (containers close to users, Frankfurt region, managed Postgres add-on), Render "
        "(Frankfurt region, simple), or a managed Kubernetes cluster, which is overkill for two people.",
    ),
    ("user", "We don't want to run servers ourselves if we can avoid it."),
    (
        "assistant",
        "Then Fly.io or Render. Fly gives more control over regions and machines; Render is simpler "
        "but pricier as you grow. Both deploy from a Dockerfile and support health checks and "
        "zero-downtime deploys.",
    ),
    ("user", "Let's go with Fly.io for hosting the API in the Frankfurt region."),
    (
        "assistant",
        "Fine choice. Put the app and the database in the same region, set up a staging app that "
        "mirrors production, and keep secrets in fly secrets rather than in the repository.",
    ),
    ("user", "How should we handle payments? Teachers want to be paid weekly."),
    (
        "assistant",
        "Stripe Connect is built for marketplaces: students pay the platform, Stripe pays out teachers "
        "on a schedule you choose, including weekly, and handles KYC for the teachers. It adds fees "
        "but saves you from handling money transmission yourself.",
    ),
    ("user", "Sounds right. What about the front end? Neither of us likes heavy JavaScript frameworks."),
    (
        "assistant",
        "Server-rendered Django templates with htmx for the interactive parts (picking a slot, "
        "cancelling) keep everything in Python and avoid a separate build pipeline. You can add "
        "Alpine.js for small client-side behaviour.",
    ),
    ("user", "Nice, htmx it is. When can we realistically launch a beta?"),
    (
        "assistant",
        "With Django, Stripe Connect and htmx, a focused beta (teacher profiles, availability, "
        "booking, payment, email reminders) is a few weeks of work for two people. Leave reviews, "
        "packages and group lessons for after the beta.",
    ),
    ("user", "We agreed to ship the beta on March 3rd with ten teachers from our own music school."),
    (
        "assistant",
        "A fixed date and a friendly first cohort is a good plan. Two weeks before, freeze features "
        "and spend the time on onboarding, backups and error reporting.",
    ),
    ("user", "Backups: is the managed Postgres enough?"),
    (
        "assistant",
        "Managed snapshots protect against disk failure but not against your own mistakes or the "
        "provider losing the volume. Add a nightly pg_dump to object storage in another provider, "
        "keep 30 days, and test a restore once a month.",
    ),
    ("user", "TODO for us: set up the nightly pg_dump to S3 and test a restore before the beta."),
    (
        "assistant",
        "Also add Sentry (or a similar service) for errors and a simple uptime check; both take an "
        "afternoon and will save you during the beta.",
    ),
    ("user", "Thanks, this is really helpful."),
    ("assistant", "Good luck with the launch! Feel free to come back when you plan the reminder emails."),
]


@pytest.fixture
def real_store(db_path: Path, real_embedder: SentenceTransformerEmbedder) -> Iterator[Store]:
    cfg = Config()
    cfg.summary.max_tokens = 220
    s = Store(db_path, config=cfg, embedder=real_embedder)
    yield s
    s.close()


def test_summary_of_a_written_thread_keeps_its_key_decisions(real_store: Store) -> None:
    msgs = [MessageIn(role, text, f"m{i}") for i, (role, text) in enumerate(CONVERSATION)]
    tid = real_store.write_thread(ThreadIn("test", "saas", "Piano lessons SaaS stack", msgs)).thread_id
    r = summarize_thread(real_store, tid)
    assert r.method == "embedding" and r.summary is not None
    content = r.summary.content
    assert r.summary.token_count <= 220 < real_store.get_thread(tid).token_count
    for decision in (
        "We decided to use PostgreSQL 16 as the only database",
        "Let's go with Fly.io for hosting the API in the Frankfurt region",
        "We agreed to ship the beta on March 3rd",
        "TODO for us: set up the nightly pg_dump",
    ):
        assert decision in content, f"missing {decision!r} in:\n{content}"
    assert "Thanks, this is really helpful" not in content
    topics = [t.lower() for t, _ in update_topics(real_store, tid)]
    assert {"postgresql", "fly.io", "htmx", "django"} & set(topics)
