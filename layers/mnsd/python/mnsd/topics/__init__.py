"""The topic service: topics, subscriptions and publishing, over the model (`mnsd.model.topics`)."""
