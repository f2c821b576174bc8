from tests.fakes.fixtures import anthropic_fake

__all__ = ["anthropic_fake"]
