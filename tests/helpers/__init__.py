"""Code the tests share (builders, fixtures' data, test doubles); never a test module itself."""
