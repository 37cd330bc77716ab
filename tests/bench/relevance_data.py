"""Labelled memories for the recall-coverage row: each with the messages that should recall it.

A message shares some but not all of its memory's key terms (with the name, the description, or
only the body), says it in other words, or is in Chinese, Japanese or Korean; the distractors
(`DISTRACTOR_*`) are memories of the same kind, full of the same common words. `PASTES` are logs
and code a message may start with, its question coming last."""

from __future__ import annotations

# Each memory: `type: name`, its description, its body (one or more lines), then `> ` a message
# that should recall it.
_TARGETS_TEXT = """
feedback: never mock the database in integration tests
    integration tests must hit a real Postgres; mocks hid a broken migration last quarter
    Use the db fixture in tests/integration.
    **Why:** mocked tests passed while the production migration failed.
    > can you write an integration test for the order repository? just mock the db layer
    > the integration suite is slow, can we stub postgres out?

project: payments release train
    the payments service ships only with the Thursday release train
    Hotfixes need sign-off from Dana. The train is cut on Wednesday at 18:00 UTC.
    > can I push this payments fix out today?
    > when is the next release cut for payments?

user: user is a data scientist new to React
    strong in Python and pandas, first time touching the frontend
    Explain frontend ideas by analogy with dataframes and notebooks.
    > I don't get React hooks, what does useEffect do here?

reference: bug tracker for the mobile app
    mobile bugs are tracked in Linear project MOB, not GitHub issues
    iOS and Android crash reports from Sentry are linked there automatically.
    > where do I file bugs for the mobile app?
    > the iOS build crashes on launch, where do we track that?

feedback: terse answers
    user wants short replies without preamble or a summary at the end
    Lead with the answer. No 'Great question'.
    > please keep your replies short from now on
    > stop writing such long essays

project: auth migration to OIDC
    replacing the session-cookie login with OIDC via Keycloak by March
    The legacy /login endpoint stays until the mobile app ships 4.2.
    > should I still add features to the old /login endpoint?
    > how far along is the keycloak switch?

reference: grafana latency dashboard
    p99 latency of the API is on the Grafana board api-golden-signals
    Panels: p50/p99 per route, error rate, saturation.
    > where can I see p99 latency for the api?

feedback: no force pushes on shared branches
    user got burned by a force push to release/*; --force-with-lease on your own branches only
    Shared: main, release/*, hotfix/*.
    > just force push the rebase to the release branch

project: flaky checkout e2e test
    test_checkout_timeout in tests/e2e fails in about 5% of runs
    Cause: the payment sandbox answers slowly at night. Rerun once before investigating.
    > test_checkout_timeout failed again on CI, is it my change?
    > the checkout e2e test is flaky again

feedback: pnpm not npm
    the monorepo uses pnpm workspaces; npm breaks the lockfile
    Run pnpm install at the root, never inside a package.
    > npm install fails with a weird lockfile error

reference: staging database credentials
    staging DB credentials are in the 1Password vault Backend Staging
    Never put them in .env files that get committed.
    > how do I connect to the staging database?
    > where are the staging db passwords kept?

project: search reindex freeze
    no Elasticsearch mapping changes until the reindex finishes on the 14th
    The reindex runs in the background on the search cluster.
    > I want to add a new field to the elasticsearch mapping for products

feedback: commit message style
    conventional commits with a scope, imperative mood, no emoji
    Example: fix(billing): round invoice totals half-up.
    > write a commit message for these changes

user: user's working hours
    user works from Lisbon and prefers meetings before 16:00 local time
    Avoid late slots; they pick up their kids.
    > what time should we put the meeting with the US team?

project: rate limiter rewrite
    the gateway's token-bucket rate limiter is being rewritten in Go
    The Python limiter is frozen: bug fixes only.
    > bump the rate limit for the partner api in the gateway

reference: on-call runbooks
    incident runbooks are in Notion under Engineering / On-call
    The PagerDuty schedule is core-platform; escalate after 15 minutes.
    > I'm on call tonight, where is the runbook for the queue backlog alert?

feedback: comments explain why
    user dislikes comments that restate the code
    Only comment intent, trade-offs and surprises.
    > add some comments to this function

project: python 3.12 upgrade
    services move to Python 3.12 in Q3; no 3.13-only features yet
    The Docker base image is python:3.12-slim.
    > which python version should the docker image use?

reference: design system storybook
    UI components are documented in Storybook at design.internal
    Reuse those before writing a new component.
    > is there already a date picker component I can reuse?

feedback: characterization tests before refactors
    before any refactor, add tests that pin the current behaviour
    Then refactor in small steps.
    > let's refactor the invoice module

project: billing jobs moved to Temporal
    monthly invoicing now runs as Temporal workflows, not cron
    The old crontab on worker-3 is disabled.
    > the invoice cron didn't run last night

reference: feature flag service
    feature flags are managed in Unleash with team-prefixed names
    Flag names are kebab-case, e.g. growth-new-onboarding.
    > how do I put the new onboarding flow behind a flag?

user: user leads the platform team
    user leads a platform team of six and reviews infra changes
    Terraform and Kubernetes changes go through them.
    > who should review this terraform change?

feedback: small pull requests
    split work into pull requests under ~300 lines; stacked ones are fine
    Big diffs get skimmed, not reviewed.
    > this diff is getting big, should I split it up?

project: GDPR deletion deadline
    account deletion requests must complete within 30 days
    The purge job lives in jobs/gdpr_purge.py and runs nightly.
    > a customer asked us to delete their account, what's the process?
    > how long do we have to purge a user's data after they ask?

reference: API style guide
    REST endpoints follow the Zalando guidelines: plural nouns, kebab-case
    JSON fields are snake_case.
    > should this new endpoint path be camelCase or kebab-case?

feedback: answer with diffs
    when suggesting changes, user wants a unified diff, not the whole file
    Keep unchanged context to three lines.
    > show me the fix but not the entire file again

project: mobile 4.2 release blocker
    push notifications crash on Android 14; blocks the 4.2 store release
    Tracked as MOB-412.
    > any known issues with push notifications on android?

reference: analytics warehouse
    product analytics live in the BigQuery dataset prod_events
    dbt models are in the analytics repo.
    > how many signups last week? which dataset has the events?

feedback: British spelling in docs
    user-facing docs use British English: colour, organise
    Code identifiers stay American.
    > proofread the docs page about colour themes

project: legacy PHP admin is read-only
    new admin features go into the Next.js app, not the PHP one
    The PHP panel is deleted once exports move over.
    > add a bulk export button to the admin panel

user: user is colour-blind
    user has deuteranopia; avoid red/green-only distinctions
    Use symbols or bold next to colours in charts and terminal output.
    > make the test output red and green for failures and passes
    > pick chart colours that work for me

reference: VPN for internal tools
    internal dashboards need the WireGuard VPN profile from IT
    Tailscale is not supported any more.
    > I can't reach the internal dashboards from home
    > do we use tailscale or something else for vpn?

feedback: ask before new dependencies
    ask before adding a package; security reviews every new one
    Prefer the standard library; dateutil and requests are already approved.
    > let's pull in a library for parsing dates

project: orders service carved out
    orders is the first domain split out of the monolith
    Its tables move to their own database in phase 2.
    > can I join the orders table from the monolith code?
    > where will the orders tables live after the split?

reference: load testing with k6
    load tests are k6 scripts in perf/; run them against the perf cluster
    Never against staging: it shares the database.
    > I want to load test the new search endpoint
    > can I run k6 against staging?

feedback: strict typing
    user wants full type hints and mypy --strict clean backend code
    No Any without a comment saying why.
    > does this need to pass mypy?
    > should I add type hints to this backend module?

project: CDN moving to Fastly
    static assets move from CloudFront to Fastly in May
    Purge with the fastly CLI, service id in the wiki.
    > how do I purge the cdn for the marketing site's images?

user: user is learning Rust
    user learns Rust on side projects and wants idiomatic explanations
    Explain borrow checker errors step by step.
    > why does the borrow checker complain about this loop?
    > explain lifetimes in rust like I'm new to it

reference: where secrets live
    application secrets come from Vault through the sidecar
    API keys for third-party providers go under secret/apps/<service>.
    > where do I put the api key for the new email provider?

feedback: lint before committing
    user expects ruff and eslint to be clean before every commit
    CI fails the build on any lint warning.
    > CI failed on lint again

project: AI summaries beta
    ten design partners get the AI summaries beta
    Feedback goes to #beta-summaries.
    > a beta customer reported a bad summary, where do I send it?
    > who are our design partners for the new summarisation feature?

reference: database ERD
    database ERDs are generated nightly into docs/erd.svg
    Generated from the live schema.
    > is there a diagram of the database schema somewhere?

feedback: avoid N+1 queries
    N+1 queries caused the March outage; use select_related in views
    Check the debug toolbar's query count.
    > this django view is slow, lots of queries in the toolbar

project: kafka retention
    event topics keep seven days; replay older ones from the S3 archive
    The replay tool is scripts/replay_events.py.
    > I need to replay events from two weeks ago
    > how long are kafka events kept?

project: 数据库迁移冻结
    本周五之前不要合并任何数据库迁移脚本
    DBA 正在升级主库，升级期间迁移会锁表。
    > 我能合并这个迁移脚本吗？
    > 数据库升级什么时候结束

feedback: 回复用中文
    用户希望所有回答都用简体中文，代码注释保持英文
    术语可以保留英文。
    > 以后请用中文回答我

reference: 监控告警群
    线上告警会推送到飞书群“核心服务告警”
    值班同学需要在十分钟内响应。
    > 线上出问题了告警发到哪里

project: 支付回调重试
    支付宝回调失败时最多重试五次，间隔指数增长
    重试逻辑在 payment/callback.py。
    > 支付回调失败会重试几次？
    > 支付宝通知失败怎么办

user: 用户是后端负责人
    用户负责后端架构，熟悉 Go 和 Kafka
    讨论方案时可以直接深入细节。
    > 这个 Kafka 消费者的设计你怎么看

reference: 测试环境地址
    测试环境部署在 test.internal，账号找运维申请
    测试数据每周一重置。
    > 测试环境的账号怎么申请

project: API 网关限流
    网关对合作伙伴接口限流每秒一百次
    超过限制返回 429。
    > 合作伙伴说接口被限流了

feedback: 敬語で返答
    ユーザーは丁寧な日本語（です・ます調）での返答を希望
    コードのコメントは英語のまま。
    > これからは丁寧な日本語で答えてください

project: リリース凍結期間
    年末年始（12月28日〜1月4日）は本番リリース禁止
    緊急の修正は部長の承認が必要。
    > 年末に本番へリリースしても大丈夫？

reference: 設計ドキュメントの場所
    設計書はConfluenceの「基盤チーム」スペースにまとめてある
    古い設計書はアーカイブ済み。
    > 設計書はどこにありますか

project: 検索の速度改善
    商品検索のレスポンスを200ms以下にするのが今期の目標
    計測はDatadogのダッシュボードで。
    > 検索が遅いって言われたんだけど目標値ある？
    > 商品検索のレスポンス目標は？

user: ユーザーはiOSエンジニア
    SwiftとSwiftUIが専門で、バックエンドは初心者
    サーバー側の説明は丁寧に。
    > SwiftUIでこの画面どう作る？

project: 배포 승인 절차
    운영 배포는 금요일 오후에 금지, 배포 전 팀장 승인 필요
    긴급 배포는 CTO 승인.
    > 금요일에 운영 배포해도 되나요?
    > 배포 전에 누구 승인 받아야 해?

feedback: 한국어로 답변
    사용자는 한국어 답변을 원하고 기술 용어는 영어 그대로
    코드 주석은 영어로.
    > 앞으로 한국어로 답변해 주세요

reference: 예산 관리 시트
    클라우드 예산은 재무팀 구글 시트에서 관리
    매달 초에 업데이트.
    > 클라우드 비용 예산 어디서 확인해?

project: 결제 모듈 리팩터링
    결제 모듈은 3월까지 리팩터링 중, 새 기능 추가 금지
    버그 수정만 허용.
    > 결제 모듈에 새 기능 넣어도 돼?
"""


def _targets(text: str) -> list[tuple[str, str, str, str, tuple[str, ...]]]:
    """(type, name, description, body, messages) of each memory in `text`."""
    targets = []
    for record in text.strip().split("\n\n"):
        head, description, *rest = record.splitlines()
        memory_type, name = head.split(": ", 1)
        body = [line.strip() for line in rest if not line.lstrip().startswith(">")]
        messages = tuple(line.strip().removeprefix("> ") for line in rest if line.lstrip().startswith(">"))
        targets.append((memory_type, name, description.strip(), "\n".join(body), messages))
    return targets


# Messages of 40-50 words, as people write when they explain a problem (the typing row types them).
LONG_MESSAGES = {
    "characterization tests before refactors": (
        "the invoice module has grown into one huge file where a dozen functions share the same global "
        "state and I would like to clean it up this week, can you suggest a plan for splitting it into "
        "smaller pieces without breaking what it does today"
    ),
    "billing jobs moved to Temporal": (
        "so the monthly invoices did not go out this morning and finance is already asking, I checked "
        "the crontab on worker-3 and the invoice entry is still in there but nothing ran last night, "
        "can you help me work out why the invoice job never ran"
    ),
}
TARGETS = [
    (memory_type, name, description, body, messages + tuple(m for n, m in LONG_MESSAGES.items() if n == name))
    for memory_type, name, description, body, messages in _targets(_TARGETS_TEXT)
]

# What people paste before their question (the coverage row asks each memory's first message again
# after one of these): a traceback, a service log, code, a test run. Their words are the
# distractors' words (worker, queue, orders, billing, payments, retries, latency).
PASTES = (
    """Traceback (most recent call last):
  File "/srv/app/worker/handlers.py", line 212, in handle_message
    result = processor.process(envelope, context=ctx, retries=3)
  File "/srv/app/worker/processor.py", line 88, in process
    payload = self.decoder.decode(envelope.body, schema=self.schema_registry.lookup(envelope.kind))
  File "/srv/app/lib/codec/json_codec.py", line 41, in decode
    raise DecodeError(f"unexpected token at offset {offset}: {snippet!r}")
lib.codec.errors.DecodeError: unexpected token at offset 1837: '\\x00\\x00garbage'
2026-11-30T12:01:33Z ERROR kafka consumer group orders-v2 lag exceeded threshold partition=7 offset=99812
2026-11-30T12:01:34Z WARN  circuit breaker opened upstream=inventory latency_ms=5012 attempts=4
""",
    """2026-12-02 09:14:07,112 INFO  [scheduler] starting job sync_inventory (run 5521)
2026-12-02 09:14:07,480 INFO  [worker-2] fetched 1200 orders from the orders api page=1
2026-12-02 09:14:09,031 WARN  [worker-2] retrying request to billing gateway after timeout (attempt 2 of 5)
2026-12-02 09:14:12,902 ERROR [worker-2] billing gateway returned 503 Service Unavailable
2026-12-02 09:14:12,903 ERROR [scheduler] job sync_inventory failed: upstream unavailable
2026-12-02 09:14:13,000 INFO  [metrics] queue depth=842 cache hit ratio=0.71 p99 latency=2300ms
""",
    """def apply_discount(order, code):
    rules = load_rules(settings.DISCOUNT_RULES_PATH)
    for rule in rules:
        if rule.matches(order.customer, code):
            order.total = round(order.total * (1 - rule.percent / 100), 2)
            log.info("discount %s applied to order %s", code, order.id)
            return order
    raise InvalidDiscount(code)
""",
    """$ pnpm test --filter web
 FAIL  src/components/Checkout.test.tsx (8.214 s)
  ● Checkout › submits the payment form
    TypeError: Cannot read properties of undefined (reading 'amount')
      at PaymentSummary (src/components/PaymentSummary.tsx:27:31)
      at renderWithHooks (node_modules/react-dom/cjs/react-dom.development.js:16305:18)
Test Suites: 1 failed, 41 passed, 42 total
Tests:       1 failed, 318 passed, 319 total
""",
)

# Distractors: memories a busy project piles up, made from the words the messages above use too.
DISTRACTOR_COMPONENTS = (
    "api", "frontend", "backend", "worker", "scheduler", "billing", "search", "auth", "gateway",
    "mobile app", "admin panel", "cli", "sdk", "docs site", "database", "payments service",
    "notifications", "reporting", "onboarding", "checkout", "inventory", "orders", "analytics",
    "email", "queue", "cache", "web app", "ios app", "android app", "release tooling",
    "integration suite", "monolith", "data pipeline", "dashboard",
)  # fmt: skip
DISTRACTOR_TOPICS = (
    "migration", "release", "tests", "deploy", "config", "logging", "metrics", "alerts", "schema",
    "dependencies", "lint rules", "code review", "branching", "backups", "feature flags", "retries",
    "timeouts", "rate limits", "error handling", "docs", "permissions", "performance", "caching",
    "monitoring", "build", "ci pipeline", "staging environment", "unit tests", "e2e tests",
    "dashboards", "runbook", "data model", "endpoints", "versioning", "changelog", "on-call",
    "latency", "secrets", "comments", "refactor",
)  # fmt: skip
DISTRACTOR_TOOLS = (
    "GitHub", "Jira", "Linear", "Notion", "Confluence", "Grafana", "Datadog", "Sentry", "PagerDuty",
    "Slack", "1Password", "Vault", "Terraform", "Kubernetes", "Docker", "Postgres", "Redis",
    "Kafka", "S3", "BigQuery", "Airflow", "Jenkins", "CircleCI", "the wiki", "Storybook",
    "Temporal", "Elasticsearch", "Fastly",
)  # fmt: skip
DISTRACTOR_VERBS = (
    "review", "update", "check", "document", "test", "clean up", "monitor", "split", "simplify",
    "pin", "write down", "ask about", "measure", "fix", "migrate", "freeze", "speed up", "rename",
)  # fmt: skip
DISTRACTOR_WHEN = (
    "before the next release", "after the freeze", "every sprint", "on Mondays", "when on call",
    "before merging", "in the morning", "at the end of the quarter", "after each deploy",
    "for new hires",
)  # fmt: skip
DISTRACTOR_STYLES = (
    "short answers", "detailed explanations", "examples first", "bullet lists", "no emoji",
    "code before prose", "links to docs", "step by step plans", "small commits", "tests first",
    "type hints", "plain English",
)  # fmt: skip
# Words of Chinese, Japanese and Korean memories, a paragraph each (Korean spaces its words).
_CJK_WORDS = """
数据库 迁移 测试 部署 缓存 索引 日志 配置 发布 分支 接口 服务
告警 监控 环境 脚本 用户 后端 前端 支付 账号 代码 评审 线上

設定 検索 認証 テスト デプロイ レビュー ログ 本番 環境
リリース 設計 速度 画面 サーバー チーム ドキュメント バックエンド 日本語

배포 테스트 설정 로그 서버 예산 운영 검토 모듈 기능 승인 답변 결제 클라우드 팀 문서
"""
DISTRACTOR_CJK = tuple(tuple(words.split()) for words in _CJK_WORDS.strip().split("\n\n"))
