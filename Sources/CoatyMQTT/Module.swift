// Placeholder so the module builds; replaced by its implementation.
