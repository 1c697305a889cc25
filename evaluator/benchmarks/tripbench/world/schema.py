"""The world's SQLite schema (the contract of every reader) and its indexes."""

from __future__ import annotations

TABLES: dict[str, str] = {
    "meta": "key TEXT PRIMARY KEY, value TEXT NOT NULL",
    "cities": "id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, lat REAL NOT NULL, "
              "lon REAL NOT NULL",
    "attractions": "id TEXT PRIMARY KEY, city_id TEXT NOT NULL REFERENCES cities(id), "
                   "name TEXT NOT NULL, category TEXT NOT NULL, heat_score REAL NOT NULL, "
                   "comment_score REAL NOT NULL, comment_count INTEGER NOT NULL, "
                   "sight_level INTEGER NOT NULL, lat REAL NOT NULL, lon REAL NOT NULL, "
                   "open_time TEXT NOT NULL, close_time TEXT NOT NULL, "
                   "closed_weekdays TEXT NOT NULL, duration_min INTEGER NOT NULL",
    "attraction_products": "id TEXT PRIMARY KEY, "
                           "attraction_id TEXT NOT NULL REFERENCES attractions(id), "
                           "name TEXT NOT NULL, price REAL NOT NULL",
    "hotels": "id TEXT PRIMARY KEY, city_id TEXT NOT NULL REFERENCES cities(id), "
              "name TEXT NOT NULL, star INTEGER NOT NULL, brand TEXT NOT NULL, "
              "facilities TEXT NOT NULL, score REAL NOT NULL, lat REAL NOT NULL, "
              "lon REAL NOT NULL, review_count INTEGER NOT NULL, good_rate REAL NOT NULL, "
              "product_rating REAL NOT NULL, environment_rating REAL NOT NULL, "
              "service_rating REAL NOT NULL",
    "hotel_rooms": "id TEXT PRIMARY KEY, hotel_id TEXT NOT NULL REFERENCES hotels(id), "
                   "name TEXT NOT NULL, capacity INTEGER NOT NULL, price REAL NOT NULL, "
                   "breakfast INTEGER NOT NULL, cancel_policy TEXT NOT NULL, "
                   "has_window INTEGER NOT NULL",
    "restaurants": "id TEXT PRIMARY KEY, city_id TEXT NOT NULL REFERENCES cities(id), "
                   "name TEXT NOT NULL, cuisine TEXT NOT NULL, avg_price REAL NOT NULL, "
                   "score REAL NOT NULL, lat REAL NOT NULL, lon REAL NOT NULL, "
                   "open_time TEXT NOT NULL, close_time TEXT NOT NULL, "
                   "review_count INTEGER NOT NULL, product_rating REAL NOT NULL, "
                   "environment_rating REAL NOT NULL, service_rating REAL NOT NULL, "
                   "reservable INTEGER NOT NULL, must_reserve INTEGER NOT NULL",
    "restaurant_products": "id TEXT PRIMARY KEY, "
                           "restaurant_id TEXT NOT NULL REFERENCES restaurants(id), "
                           "name TEXT NOT NULL, price REAL NOT NULL, people INTEGER NOT NULL",
    "flights": "id TEXT PRIMARY KEY, number TEXT NOT NULL, "
               "from_city TEXT NOT NULL REFERENCES cities(id), "
               "to_city TEXT NOT NULL REFERENCES cities(id), date TEXT NOT NULL, "
               "dep_time TEXT NOT NULL, arr_time TEXT NOT NULL, duration_min INTEGER NOT NULL, "
               "airline TEXT NOT NULL, from_airport TEXT NOT NULL, to_airport TEXT NOT NULL, "
               "from_lat REAL NOT NULL, from_lon REAL NOT NULL, to_lat REAL NOT NULL, "
               "to_lon REAL NOT NULL, on_time_rate REAL NOT NULL, avg_delay_min INTEGER NOT NULL",
    "flight_seats": "id TEXT PRIMARY KEY, flight_id TEXT NOT NULL REFERENCES flights(id), "
                    "cabin TEXT NOT NULL, price REAL NOT NULL, remaining INTEGER NOT NULL, "
                    "platform TEXT NOT NULL",
    "trains": "id TEXT PRIMARY KEY, number TEXT NOT NULL, "
              "from_city TEXT NOT NULL REFERENCES cities(id), "
              "to_city TEXT NOT NULL REFERENCES cities(id), date TEXT NOT NULL, "
              "dep_time TEXT NOT NULL, arr_time TEXT NOT NULL, duration_min INTEGER NOT NULL, "
              "train_type TEXT NOT NULL, from_station TEXT NOT NULL, to_station TEXT NOT NULL, "
              "from_lat REAL NOT NULL, from_lon REAL NOT NULL, to_lat REAL NOT NULL, "
              "to_lon REAL NOT NULL",
    "train_seats": "id TEXT PRIMARY KEY, train_id TEXT NOT NULL REFERENCES trains(id), "
                   "seat_class TEXT NOT NULL, price REAL NOT NULL, remaining INTEGER NOT NULL, "
                   "platform TEXT NOT NULL",
}

# name -> (table, columns): what the searches and detail look-ups need
INDEXES: dict[str, tuple[str, str]] = {
    "ix_cities_name_nocase": ("cities", "name COLLATE NOCASE"),
    "ix_attractions_city": ("attractions", "city_id"),
    "ix_attraction_products_attraction": ("attraction_products", "attraction_id"),
    # (city, sort column, id): a city's first page by rating / price without sorting the city
    "ix_hotels_city_score": ("hotels", "city_id, score DESC, id"),
    "ix_hotel_rooms_hotel": ("hotel_rooms", "hotel_id, price"),
    "ix_restaurants_city_score": ("restaurants", "city_id, score DESC, id"),
    "ix_restaurants_city_price": ("restaurants", "city_id, avg_price, id"),
    "ix_restaurant_products_restaurant": ("restaurant_products", "restaurant_id"),
    "ix_flights_route_date": ("flights", "from_city, to_city, date"),
    "ix_flights_from_airport": ("flights", "from_airport, from_lat, from_lon"),
    "ix_flight_seats_flight": ("flight_seats", "flight_id, price"),
    "ix_trains_route_date": ("trains", "from_city, to_city, date"),
    "ix_trains_from_station": ("trains", "from_station, from_lat, from_lon"),
    "ix_train_seats_train": ("train_seats", "train_id, price"),
}

# tables in insertion order (parents first)
TABLE_ORDER = tuple(TABLES)


def create_tables_sql() -> list[str]:
    return [f"CREATE TABLE {name} ({cols})" for name, cols in TABLES.items()]


def create_indexes_sql() -> list[str]:
    return [f"CREATE INDEX {name} ON {table} ({cols})"
            for name, (table, cols) in INDEXES.items()]


def columns(table: str) -> list[str]:
    """The column names of `table`, in order."""
    out = []
    for part in TABLES[table].split(","):
        word = part.strip().split(" ", 1)[0]
        if word and word[0].islower():
            out.append(word)
    return out
