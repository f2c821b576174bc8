"""The credential shapes `ci_agent.redact` knows, as data: one table of token patterns and the
rules for secret-looking names with high-entropy values.

Each token pattern is `(name, regex)`; a group named `keep` is text kept in front of the secret
(`AccountKey=`, `https://hooks.slack.com/services/`), so the reader still sees what was there.
Every pattern starts with a literal or a bounded class and has only bounded quantifiers, so a
100 MB log costs linear time (bench/redaction.py, BENCHMARKS.md).

Deliberately NOT redacted: Stripe publishable keys (`pk_live_...`, public by design, shipped to
browsers) and Azure/Kubernetes CA certificate data (public); the names list below excludes
public-key names (`*PUBLIC_KEY*`, `*_KEY_ID`, `*KEY_PATH*`) for the same reason.
"""

from __future__ import annotations

import math
import re
from collections import Counter

TOKEN_PATTERNS: tuple[tuple[str, str], ...] = (
    # --- model and forge tokens
    ("anthropic_key", r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,400}"),
    ("openai_key", r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,400}"),
    ("github_token", r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{30,255}"),
    ("github_token", r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{22,255}"),
    ("gitlab_token",
     r"(?<![A-Za-z0-9_-])gl(?:pat|dt|rt|ptt|cbt|oas|soat|ffct|imt|agent)-[A-Za-z0-9_-]{20,255}"),
    # --- chat
    ("slack_token", r"(?<![A-Za-z0-9_-])xox[abposre]-[A-Za-z0-9-]{10,255}"),
    ("slack_token", r"(?<![A-Za-z0-9_-])xapp-\d-[A-Za-z0-9-]{10,255}"),
    ("slack_webhook", r"(?P<keep>\bhooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9/_-]{8,300}"),
    ("discord_webhook",
     r"(?P<keep>\b(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/)\d{5,30}/[A-Za-z0-9_-]{20,200}"),
    ("discord_token", r"(?<![A-Za-z0-9_.-])[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}"
                      r"(?![A-Za-z0-9_-])"),
    ("teams_webhook", r"(?P<keep>\b[A-Za-z0-9-]{1,63}\.webhook\.office\.com/)[^\s\"'<>`]{10,600}"),
    ("teams_webhook", r"(?P<keep>\boutlook\.office(?:365)?\.com/webhook/)[^\s\"'<>`]{10,600}"),
    ("telegram_token", r"(?<![A-Za-z0-9_:])\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])"),
    # --- cloud
    ("aws_access_key", r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])"),
    ("gcp_api_key", r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])"),
    ("azure_storage_key", r"(?P<keep>(?i:\b(?:AccountKey|SharedAccessKey)[ \t]{0,3}=[ \t]{0,3}))"
                          r"[A-Za-z0-9+/]{20,200}={0,2}"),
    ("azure_sas", r"(?P<keep>[?&;](?i:sig)=)[A-Za-z0-9%+/=]{16,300}"),
    ("azure_client_secret", r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}"
                            r"(?![A-Za-z0-9_~.-])"),
    # --- payments
    ("stripe_key", r"(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,250}"),
    ("stripe_webhook_secret", r"(?<![A-Za-z0-9_])whsec_[A-Za-z0-9+/=]{20,250}"),
    ("square_token", r"(?<![A-Za-z0-9_-])(?:EAAA[A-Za-z0-9_-]{56,70}|sq0atp-[A-Za-z0-9_-]{22,60}"
                     r"|sq0csp-[A-Za-z0-9_-]{40,60})"),
    ("braintree_token", r"(?<![A-Za-z0-9_])access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}"),
    # --- mail
    ("sendgrid_key", r"(?<![A-Za-z0-9_-])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
    ("mailgun_key", r"(?<![A-Za-z0-9_-])key-[0-9a-z]{32}(?![0-9a-z])"),
    ("mailchimp_key", r"(?<![A-Za-z0-9_-])[0-9a-f]{32}-us\d{1,2}(?![0-9])"),
    # --- package registries
    ("npm_token", r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
    ("pypi_token", r"(?<![A-Za-z0-9_-])pypi-AgE[A-Za-z0-9_-]{50,400}"),
    # --- generic shapes
    ("jwt", r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,4000}\.eyJ[A-Za-z0-9_-]{5,8000}\.[A-Za-z0-9_-]{10,4000}"),
    ("bearer", r"(?P<keep>\b[Bb]earer[ \t]{1,10})[A-Za-z0-9._~+/=-]{12,4000}"),
    ("basic_auth",
     r"(?P<keep>\b(?i:authorization)[\"']?[ \t]{0,10}[:=][ \t]{0,10}[\"']?(?i:basic)[ \t]{1,10})"
     r"[A-Za-z0-9+/=]{8,4000}"),
    ("cli_secret", r"(?P<keep>(?<![\w-])--?(?i:password|passwd|token|secret|api-key|apikey)(?:=|[ \t]{1,10}))"
                   r"(?![\"'$%{\[-])[^\s\"']{4,400}"),
    # any URL with a password in its user-info: scheme, user and host stay
    ("url_password", r"(?P<keep>[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s/:@\"'<>\[]{1,200}:)[^\s/@\"'<>\[]{1,400}(?=@)"),
    # connection strings (ADO.NET, ODBC, JDBC properties): `;Password=...` up to the next `;`
    ("connection_password", r"(?P<keep>;[ \t]{0,5}(?i:password|pwd)[ \t]{0,5}=[ \t]{0,5})(?!\{\{)"
                            r"(?:\"[^\"\n]{1,400}\"|'[^'\n]{1,400}'|\{(?:[^}\n]|\}\}){1,400}\}|[^;\n\"'{\[][^;\n\"']{0,399})"),
    # (`Password=x;` first in the string: no blanks around `=`, unlike `password = box.Text;` in C#)
    ("connection_password", r"(?P<keep>(?<![\w.$-])(?i:password|pwd)=)"
                            r"(?:\{(?:[^}\n]|\}\}){1,400}\}|[^;\n\"'{(\[$%\s][^;\n\"'()]{0,399})(?=;)"),
    # kubeconfig: the client's private key (certificate data is public)
    ("kubeconfig_key",
     r"(?P<keep>\bclient-key-data[\"']?[ \t]{0,10}:[ \t]{0,10}[\"']?)[A-Za-z0-9+/=]{16,20000}"),
    # .netrc: `machine h login u password p` on one line, or `password p` alone on its line
    ("netrc_password", r"(?P<keep>\b(?:machine|login)[ \t]+\S{1,200}[ \t]+(?:password|passwd)[ \t]+)"
                       r"\S{1,400}"),
    # (a numbered listing's `   3\t` and a diff's `+`/`-` prefix count as the line start)
    ("netrc_password", r"(?P<keep>(?:^|(?<=\n))[+ -]?[ \t]*(?:\d{1,9}[ \t:|]+)?[ \t]*"
                       r"(?:password|passwd)[ \t]+)\S{1,400}(?=[ \t]*(?:\r?\n|$))"),
    # Docker's config.json: `"auth": "<base64 of user:password>"`
    ("docker_auth", r"(?P<keep>[\"']auth[\"'][ \t]{0,10}:[ \t]{0,10}[\"'])[A-Za-z0-9+/=]{8,4000}"),
)

# A URL whose user-info is a token on its own (`https://ghp_...@github.com`, a Sentry DSN's key):
# redacted when it looks like a secret (`secret_like`), so `ssh://git@host` stays.
URL_USER_RE = r"(?P<keep>[A-Za-z][A-Za-z0-9+.-]{0,30}://)(?P<user>[^\s/:@\"'<>\[]{8,400})(?=@)"


# --------------------------------------------------------------------------- names and entropy

# Names whose value is a secret when it looks like one: `*_PW`, `*_PWD`, `*PASS*`, `*_CONN*`,
# `*_DSN`, `*_CERT`, `*KEY*`, `*SECRET*`, `*TOKEN*`, `*CREDENTIAL*` (so `TF_VAR_db_password`,
# `ConnectionStrings__Main`, `jwtSigningKey`, `SENTRY_DSN`). Words are split at `_ . -` and at
# camelCase humps.
_ANYWHERE = ("key", "secret", "token", "credential", "passw", "passphrase", "signing")
_WORDS = {"pw", "pwd", "pass", "dsn", "cert", "conn", "connection", "connectionstring", "connstr"}
# ... except names of public or non-secret things.
_PUBLIC = ("publickey", "keyid", "keypath", "keyfile", "keyname", "keyvault", "keysize", "keytype",
           "keyboard", "keystroke", "monkey", "turkey", "hockey", "donkey", "jockey", "keyword",
           "maxtoken", "tokencount", "tokensused", "tokenizer", "tokenlimit", "tokenurl", "tokenfile",
           "tokenpath", "tokentype", "passwordfile", "passwordpath", "passwordpolicy", "passwordlength",
           "passthrough", "passed", "passing", "certpath", "certfile", "certificatepath", "sortkey",
           "primarykey", "foreignkey", "cachekey", "partitionkey", "rowkey", "keys", "hotkey")
_WORD_SPLIT_RE = re.compile(r"[_.\-]+|(?<=[a-z0-9])(?=[A-Z])")


# A lone `Key` (a dictionary entry's key), `PASS` (`--- PASS: TestX`), `pwd`, `cert` or `conn`
# names nothing secret; `DB_PASS`, `signingKey`, `ClientCert` do.
_TOO_VAGUE = {"key", "pass", "pw", "pwd", "cert", "conn", "connection"}


def secret_name(name: str) -> bool:
    flat = re.sub(r"[_.\-]", "", name).lower()
    if flat in _TOO_VAGUE or any(word in flat for word in _PUBLIC):
        return False
    if any(word in flat for word in _ANYWHERE):
        return True
    return any(part.lower() in _WORDS for part in _WORD_SPLIT_RE.split(name) if part)


MIN_ENTROPY_CHARS = 12
_CODE_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_][A-Za-z_]*)*")


def shannon(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def secret_like(value: str) -> bool:
    """A value that reads like a generated secret: long enough, varied characters, no spaces, and
    not a path, a version, a reference or code."""
    if len(value) < MIN_ENTROPY_CHARS or any(c in value for c in " ()[]{}$%<>"):
        return False
    if _CODE_NAME_RE.fullmatch(value):  # `self.secret`, `request.headers`, `Settings.ApiKey`
        return False
    if value.startswith(("/", "./", "../", "~/", "http://", "https://", "file:")) or value.endswith(
            (".cs", ".py", ".json", ".xml", ".yml", ".yaml", ".dll", ".txt", ".log", ".trx")):
        return False
    classes = sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[^A-Za-z0-9]"))
    if classes < 2 or re.fullmatch(r"[\d.:_-]+", value):
        return False
    return shannon(value) >= 3.0


# Words (lowercase) one of which every match of a shape contains: a chunk without any of them is
# not scanned for that shape. Empty: always scanned.
_HINTS: dict[str, tuple[str, ...]] = {
    "anthropic_key": ("sk-ant-",), "openai_key": ("sk-",),
    "github_token": ("ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_"),
    "gitlab_token": ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "gloas-", "glsoat-", "glffct-", "glimt-",
                     "glagent-"),
    "slack_token": ("xox", "xapp-"), "slack_webhook": ("hooks.slack.com",), "discord_webhook": ("discord",),
    "discord_token": (".",), "teams_webhook": ("office",), "telegram_token": (":aa",),
    "aws_access_key": ("akia", "asia", "abia", "acca"), "gcp_api_key": ("aiza",),
    "azure_storage_key": ("accountkey", "sharedaccesskey"), "azure_sas": ("sig=",),
    "azure_client_secret": ("q~",),
    "stripe_key": ("_live_", "_test_"), "stripe_webhook_secret": ("whsec_",),
    "square_token": ("eaaa", "sq0atp-", "sq0csp-"), "braintree_token": ("access_token$",),
    "sendgrid_key": ("sg.",), "mailgun_key": ("key-",), "mailchimp_key": ("-us",), "npm_token": ("npm_",),
    "pypi_token": ("pypi-age",), "jwt": ("eyj",), "bearer": ("bearer",), "basic_auth": ("authorization",),
    "cli_secret": ("-pass", "-token", "-secret", "-api", "-apikey"), "url_password": ("@",),
    "connection_password": ("password", "pwd"), "kubeconfig_key": ("client-key-data",),
    "netrc_password": ("passw",), "docker_auth": ("auth",),
}


def hint_words(name: str, pattern: str) -> tuple[str, ...]:
    return _HINTS.get(name, ())
