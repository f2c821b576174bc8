"""Redaction knows real credential shapes (issue 12), and it does not destroy diagnostics.

Every secret below is made up but has the exact shape the provider issues. Each case says what
must vanish and what must stay, so a redaction that blanks the whole line fails as well as one
that misses the secret.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ci_agent.distill import distill, resolve_roots
from ci_agent.inputs import read_inputs
from ci_agent.redact import Redactor, is_secret_name

AZ_KEY = "Zm9vYmFyYmF6cXV4" * 5 + "Zm9vYmFyYg=="  # 88 characters of base64, as Azure issues
PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" * 2

# (text, secret that must vanish, text that must stay)
SHAPES = [
    (f"DefaultEndpointsProtocol=https;AccountName=shop;AccountKey={AZ_KEY};EndpointSuffix=core.windows.net",
     AZ_KEY, "AccountName=shop;AccountKey="),
    (f"Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=R;SharedAccessKey={AZ_KEY[:44]}",
     AZ_KEY[:44], "SharedAccessKeyName=R"),
    ("https://shop.blob.core.windows.net/c/f?sv=2022-11-02&sp=r&sig=Qm9vYmFyYmF6cXV4Zm9vYmFy%2BYmF6cXV4",
     "Qm9vYmFyYmF6cXV4Zm9vYmFy", "shop.blob.core.windows.net/c/f?sv=2022-11-02"),
    ("Server=db;Database=shop;User ID=sa;Password=Sup3r Secret!;Encrypt=True",
     "Sup3r Secret!", "Encrypt=True"),
    ("Server=db;User ID=sa;Password=\"p;w with 'quotes\";Encrypt=True", "p;w with", "Encrypt=True"),
    ("Driver={ODBC Driver 18};Server=db;Uid=sa;Pwd={p}}a;ss;w0rd};", "a;ss", "Uid=sa;Pwd="),
    ("Password=hunter2x;Server=db", "hunter2x", "Server=db"),
    ("STRIPE_KEY=sk_live_51HqLyjWDarjtT1zdp7dcXDnPVZ1l4gR3",
     "sk_live_51HqLyjWDarjtT1zdp7dcXDnPVZ1l4gR3", "STRIPE_KEY="),
    ("rk_live_51HqLyjWDarjtT1zdp7dcXDnPVZ", "rk_live_51HqLyjWDarjtT1zdp7dcXDnPVZ", ""),
    ("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", ""),
    ("EAAAEOuLQQmRzKGZeCsYL5WvUuIK3LfL1yyTbKuTFZ9QKdV7oXbQyK3qpf5vOTXF", "EAAAEOuLQQmRzKGZeCsYL5Wv", ""),
    ("sq0csp-1x2Y3z4A5b6C7d8E9f0G1h2I3j4K5l6M7n8O9p0Q1rS", "sq0csp-1x2Y3z4A5b6C7d8E9f0G", ""),
    ("access_token$production$abcdef0123456789$0123456789abcdef0123456789abcdef",
     "abcdef0123456789$0123", ""),
    ("POST https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
     "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", "https://hooks.slack.com/services/"),
    ("token xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xoxb-123456789012", ""),
    ("https://discord.com/api/webhooks/123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-abcdefghij",
     "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "https://discord.com/api/webhooks/"),
    ("https://contoso.webhook.office.com/webhookb2/7aa49aa6-7840-443d@72f988bf/IncomingWebhook/4f1b/d3a5",
     "7aa49aa6-7840-443d@72f988bf/IncomingWebhook", "https://contoso.webhook.office.com/"),
    ("AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "AWS_ACCESS_KEY_ID="),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     "wJalrXUtnFEMI/K7MDENG", "aws_secret"),
    ("key=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY&q=x", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "&q=x"),
    ("AZURE_CLIENT_SECRET: abc8Q~dEfGhIjKlMnOpQrStUvWxYz0123456789ab", "abc8Q~dEfGhIjKlMnOpQrStUvWxYz", ""),
    ("client_secret abc8Q~dEfGhIjKlMnOpQrStUvWxYz0123456789a", "abc8Q~dEfGhIjKlMnOpQrStUvW",
     "client_secret"),
    ("SENDGRID=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",
     "SG.ngeVfQFYQlKU0ufo8x5d1A.TwL2iGABf9DHoTf", ""),
    ("mailgun key-3ax6xnjp29jd6fds4gc373sgvjxteol0", "key-3ax6xnjp29jd6fds4gc373sgvjxteol0", "mailgun"),
    ("mc: 0123456789abcdef0123456789abcdef-us14", "0123456789abcdef0123456789abcdef-us14", "mc: "),
    (f"    client-key-data: {PEM_BODY}", PEM_BODY[:40], "client-key-data: "),
    ("    token: kube-0a1B2c3D4e5F6g7H8i9J", "kube-0a1B2c3D4e5F6g7H8i9J", "token: "),
    ("export TF_VAR_db_password=Xk9mQ2vL8pZw", "Xk9mQ2vL8pZw", "TF_VAR_db_password="),
    ('admin_pwd = "Xk9mQ2vL8pZw4Rt"', "Xk9mQ2vL8pZw4Rt", "admin_pwd = "),
    ("JWT_SIGNING_KEY=q8Zk2mW9vR4tY7uB3nX6", "q8Zk2mW9vR4tY7uB3nX6", "JWT_SIGNING_KEY="),
    ("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oUg\n"
     "-----END EC PRIVATE KEY-----",
     "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oUg", ""),
    ('{"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n'
     '-----END PRIVATE KEY-----\\n"}',
     "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", '{"private_key": "'),
    ("Authorization: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
     "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "eyJzdWIiOiIxMjM0NTY3ODkwIn0", "Authorization: "),
    ("DATABASE_URL=postgres://shop:Xk9mQ2vL8pZw@db.internal:5432/shop", "Xk9mQ2vL8pZw",
     "postgres://shop:"),
    ("SENTRY_DSN=https://0123456789abcdef0123456789abcdef@o12345.ingest.sentry.io/678",
     "0123456789abcdef0123456789abcdef", "@o12345.ingest.sentry.io/678"),
    ("git clone https://ghx_0a1B2c3D4e5F6g7H8i9J0k1L2m3N@github.com/o/r.git",
     "ghx_0a1B2c3D4e5F6g7H8i9J0k1L2m3N",
     "@github.com/o/r.git"),
    ("amqp://guest:Xk9mQ2vL8pZw@rabbit/", "Xk9mQ2vL8pZw", "amqp://guest:"),
    ('  "ConnectionStrings__Main": "Xk9mQ2vL8pZw4RtY7uB3"',
     "Xk9mQ2vL8pZw4RtY7uB3", "ConnectionStrings__Main"),
    ("MY_SERVICE_CERT=MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa", "MIIDdzCCAl+gAwIBAgIEAgAAuT", ""),
    ("DB_CONN=Xk9mQ2vL8pZw4RtY7uB3nX6q", "Xk9mQ2vL8pZw4RtY7uB3nX6q", "DB_CONN="),
    ("<add key=\"PaymentApiKey\" value=\"Xk9mQ2vL8pZw4RtY7uB3\" />", "Xk9mQ2vL8pZw4RtY7uB3", "PaymentApiKey"),
    ("<ClientSecret>Xk9mQ2vL8pZw4RtY7uB3</ClientSecret>", "Xk9mQ2vL8pZw4RtY7uB3", "<ClientSecret>"),
    ('private const string ApiKey = "Xk9mQ2vL8pZw4RtY7uB3";', "Xk9mQ2vL8pZw4RtY7uB3", "ApiKey = \""),
    ("smtp_pass: 'Xk9mQ2vL8pZw'", "Xk9mQ2vL8pZw", "smtp_pass: "),
    ("npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "npm_AbCdEfGhIjKlMnOpQrStUvWxYz", ""),
    ("pypi-AgEIcHlwaS5vcmcCJDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAwMDAwMDAwMDAwMAACKlsz",
     "AgEIcHlwaS5vcmcCJ", ""),
]

# Text that must come through unchanged: code the model needs, public values, diagnostics.
KEEP = [
    "pk_live_51HqLyjWDarjtT1zdp7dcXDnPVZ1l4gR3",  # Stripe publishable key: public by design
    "Version=4.0.0.0, Culture=neutral, PublicKeyToken=b77a5c561934e089",
    "    --- PASS: TestCases/1_+_2_=_3 (0.00s)",
    "string password = passwordBox.Text;",
    "var token = request.headers[\"Authorization\"];",
    "api_key = settings.ApiKey",
    "cacheKey: build-linux-x64-3f2a9b7c",
    "ssh://git@github.com/o/r.git",
    "https://user@example.com/path",
    "Password={{Password}}&User={{User}}",
    "src/App/Services/TokenService.cs(12,5): error CS1061: 'TokenService' does not contain a definition "
    "for 'ValidateKey' [/src/App/App.csproj]",
    "tests/test_auth.py:42: AssertionError: assert 'secret-key-value' == 'other'",
    "max_tokens=8192",
    "KEY_VAULT_NAME=shop-kv-prod",
    "public_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
]


@pytest.mark.parametrize(("text", "secret", "stays"), SHAPES, ids=[s[1][:24] for s in SHAPES])
def test_credential_shape_is_redacted_and_its_context_stays(text: str, secret: str, stays: str) -> None:
    out = Redactor().redact(text)
    assert secret not in out, out
    assert stays in out, out
    assert "[REDACTED:" in out
    assert Redactor().redact(out) == out  # idempotent


@pytest.mark.parametrize("text", KEEP)
def test_code_public_values_and_diagnostics_stay(text: str) -> None:
    assert Redactor().redact(text) == text


def test_every_shape_still_found_inside_a_log_line_and_a_diff_line() -> None:
    for text, secret, _ in SHAPES:
        if "\n" in text:
            continue
        for framed in (f"2026-12-02T10:00:00.000Z {text}", f"+{text}", f"  {text}  "):
            assert secret not in Redactor().redact(framed), framed


@pytest.mark.parametrize("name", ["DB_PW", "SMTP_PWD", "MYSQL_PASS", "REDIS_CONN", "SENTRY_DSN",
                                  "CLIENT_CERT", "STRIPE_KEY", "JWT_SIGNING_KEY", "TF_VAR_db_password"])
def test_environment_values_of_secret_looking_names_are_redacted_everywhere(name: str) -> None:
    redactor = Redactor.from_environ({name: "v4lue-0f-th3-s3cret"})
    out = redactor.redact("connecting with v4lue-0f-th3-s3cret now")
    assert out == f"connecting with [REDACTED:{name}] now"
    assert is_secret_name(name)


# --------------------------------------------------------------------------- real fixtures

_SHARED = Path(os.environ.get("CI_AGENT_SHARED", Path(__file__).resolve().parents[2] / "shared")) / "fixtures"
_OURS = Path(__file__).resolve().parent / "fixtures"


def _fixtures() -> list[Path]:
    roots = [r for r in (_SHARED, _OURS) if r.is_dir()]
    return [p for root in roots for p in sorted(root.rglob("*"))
            if p.is_file() and p.stat().st_size < 20_000_000
            and p.suffix.lower() not in (".zip", ".gz", ".png")]


def _report(path: Path) -> dict[str, object]:
    inputs = read_inputs([str(path)], None, False)
    report = distill(inputs, None, resolve_roots(inputs, None, None))
    return {"diagnostics": [(d.severity, d.file, d.line, d.column, d.code, d.message)
                            for d in report.diagnostics],
            "failures": [(f.name, f.file, f.line) for f in report.failures]}


def test_no_diagnostic_or_failed_test_of_a_real_fixture_is_altered(tmp_path: Path) -> None:
    files = _fixtures()
    assert len(files) > 100, "the real fixtures are there"
    redactor = Redactor()
    changed = []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        redacted = redactor.redact(text)
        if redacted == text:
            continue  # nothing redacted: nothing can be altered
        changed.append(path.name)
        copy = tmp_path / path.name
        copy.write_text(redacted, encoding="utf-8")
        original = tmp_path / ("orig-" + path.name)
        original.write_text(text, encoding="utf-8")
        assert _report(copy) == _report(original), path
    # Which fixtures hold anything secret-shaped at all (false positives, all of them): few.
    assert len(changed) <= 10, changed
