"""confluent-kafka adapters: a drop-in Producer placing records with kafka_placement partitioners."""
